#pragma once
// Where requests come from: a generator of (arrival time, prompt length, output length, prefix
// identity) in arrival order. Pure classes; the RequestSource process turns them into timed
// arrivals (or, for a closed loop, sends the next one when a request finishes).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/config/schema.hpp"
#include "base/registry/registry.hpp"

namespace ks::serving {

struct RequestSpec {
  double arrival_s = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  // Prefix identity (see Request): the first group_tokens tokens are the group's.
  std::uint64_t prefix_group = 0;
  std::int64_t group_tokens = 0;
  std::shared_ptr<const std::vector<std::int32_t>> prompt_ids;  // real token ids, when known
};

class Workload {
 public:
  virtual ~Workload() = default;
  // The next request, or nullopt when the workload is exhausted. Arrivals never decrease.
  virtual std::optional<RequestSpec> next() = 0;
  // Closed loop (like `vllm bench serve --max-concurrency`): at most this many requests in
  // flight, the next one sent when one finishes; arrival_s is then ignored. 0: open loop.
  virtual std::int64_t max_concurrency() const { return 0; }
  // For a closed loop: send nothing after this time (0: no limit).
  virtual double duration_s() const { return 0; }
};

struct WorkloadArgs {
  config::Params params;
  std::uint64_t seed = 0;  // the scenario's global seed
};

using WorkloadRegistry = registry::Registry<Workload, const WorkloadArgs&>;
inline WorkloadRegistry& workload_registry() { return WorkloadRegistry::instance("workload"); }

}  // namespace ks::serving
