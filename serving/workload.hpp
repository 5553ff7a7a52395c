#pragma once
// Where requests come from: a generator of (arrival time, prompt length, output length) in
// arrival order. Pure classes; the RequestSource process turns them into timed arrivals.
#include <cstdint>
#include <memory>
#include <optional>

#include "sc_modules/config/schema.hpp"
#include "sc_modules/registry/registry.hpp"

namespace ks::serving {

struct RequestSpec {
  double arrival_s = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;
  // The next request, or nullopt when the workload is exhausted. Arrivals never decrease.
  virtual std::optional<RequestSpec> next() = 0;
};

struct WorkloadArgs {
  config::Params params;
  std::uint64_t seed = 0;  // the scenario's global seed
};

using WorkloadRegistry = registry::Registry<Workload, const WorkloadArgs&>;
inline WorkloadRegistry& workload_registry() { return WorkloadRegistry::instance("workload"); }

}  // namespace ks::serving
