// Router kind `prefix_affinity`: requests of one prefix group (system prompt or conversation)
// go to the replica that already holds that prefix in its cache, unless it is overloaded
// compared with the least loaded replica; requests without a group go to the least loaded one.
#include <unordered_map>

#include "serving/router.hpp"

namespace ks::serving {
namespace {

class PrefixAffinityRouter final : public Router {
 public:
  explicit PrefixAffinityRouter(const RouterArgs& args) : slack_(args.params.integer("max_imbalance")) {}

  std::size_t route(const Request& request, const std::vector<ReplicaLoad>& replicas) override {
    const std::size_t least = least_outstanding(replicas);
    if (request.prefix_group == 0) return least;
    auto it = home_.find(request.prefix_group);
    if (it != home_.end() && it->second < replicas.size() &&
        replicas[it->second].outstanding <= replicas[least].outstanding + static_cast<std::size_t>(slack_))
      return it->second;
    home_[request.prefix_group] = least;  // (re)assign the group where there is room
    return least;
  }

 private:
  std::int64_t slack_;
  std::unordered_map<std::uint64_t, std::size_t> home_;  // lookups only
};

const bool registered = [] {
  config::Schema schema(
      "Keep each prefix group (shared system prompt, conversation) on one replica for cache hits; "
      "fall back to the least loaded replica when its home is overloaded.");
  schema.integer("max_imbalance", 16,
                 "move a group when its replica has this many more outstanding requests than the least loaded one",
                 0);
  router_registry().add("prefix_affinity", {schema.doc(), schema, [](const RouterArgs& args) {
                                              return std::make_unique<PrefixAffinityRouter>(args);
                                            }});
  return true;
}();

}  // namespace
}  // namespace ks::serving
