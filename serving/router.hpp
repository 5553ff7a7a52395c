#pragma once
// Routing policies across replicas. Pure classes.
#include <cstddef>
#include <memory>
#include <vector>

#include "base/config/schema.hpp"
#include "base/registry/registry.hpp"
#include "serving/request.hpp"

namespace ks::serving {

struct ReplicaLoad {
  std::size_t outstanding = 0;  // requests routed there and not finished
};

class Router {
 public:
  virtual ~Router() = default;
  virtual std::size_t route(const Request& request, const std::vector<ReplicaLoad>& replicas) = 0;
};

struct RouterArgs {
  config::Params params;
};

// The replica with the fewest outstanding requests; ties go to the lowest index.
std::size_t least_outstanding(const std::vector<ReplicaLoad>& replicas);

using RouterRegistry = registry::Registry<Router, const RouterArgs&>;
inline RouterRegistry& router_registry() { return RouterRegistry::instance("router"); }

}  // namespace ks::serving
