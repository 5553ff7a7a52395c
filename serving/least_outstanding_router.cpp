// Router kind `least_outstanding`: the replica with the fewest unfinished requests (ties: the
// lowest index, so the choice is deterministic).
#include "serving/router.hpp"

namespace ks::serving {

std::size_t least_outstanding(const std::vector<ReplicaLoad>& replicas) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < replicas.size(); ++i)
    if (replicas[i].outstanding < replicas[best].outstanding) best = i;
  return best;
}

namespace {

class LeastOutstandingRouter final : public Router {
 public:
  std::size_t route(const Request&, const std::vector<ReplicaLoad>& replicas) override {
    return least_outstanding(replicas);
  }
};

const bool registered = [] {
  config::Schema schema("Send each request to the replica with the fewest unfinished requests.");
  router_registry().add("least_outstanding", {schema.doc(), schema, [](const RouterArgs&) {
                                                return std::make_unique<LeastOutstandingRouter>();
                                              }});
  return true;
}();

}  // namespace
}  // namespace ks::serving
