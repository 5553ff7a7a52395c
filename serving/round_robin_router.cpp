// Router kind `round_robin`: replicas in turn, whatever their load.
#include "serving/router.hpp"

namespace ks::serving {
namespace {

class RoundRobinRouter final : public Router {
 public:
  std::size_t route(const Request&, const std::vector<ReplicaLoad>& replicas) override {
    return next_++ % replicas.size();
  }

 private:
  std::size_t next_ = 0;
};

const bool registered = [] {
  config::Schema schema("Send requests to the replicas in turn.");
  router_registry().add("round_robin", {schema.doc(), schema, [](const RouterArgs&) {
                                          return std::make_unique<RoundRobinRouter>();
                                        }});
  return true;
}();

}  // namespace
}  // namespace ks::serving
