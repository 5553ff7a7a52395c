#pragma once
// Host time to launch a step's kernels. Without CUDA graphs every kernel costs one launch; with
// them, a decode-only step whose batch is within the captured sizes replays one graph (vLLM
// captures graphs per batch size up to a limit), so the host pays one graph launch instead.
// Pure C++: the schema/params helpers let every host kind share the same keys.
#include <cstdint>

#include "hw/host/step_shape.hpp"
#include "base/config/schema.hpp"

namespace ks::hw {

struct LaunchPolicy {
  double per_kernel_s = 4e-6;
  bool cuda_graphs = false;
  std::int64_t max_graph_batch = 512;
  double graph_launch_s = 10e-6;
  bool step_granularity = true;  // one TLM transaction per step (else one per kernel)

  bool uses_graph(const StepShape& shape) const {
    return cuda_graphs && shape.pure_decode && shape.sequences > 0 && shape.sequences <= max_graph_batch;
  }
  // Host seconds spent launching `kernels` kernels of a step of this shape.
  double launch_seconds(const StepShape& shape, std::uint64_t kernels) const {
    if (kernels == 0) return 0;
    return uses_graph(shape) ? graph_launch_s : per_kernel_s * static_cast<double>(kernels);
  }
};

// Adds launch_overhead, cuda_graphs, cuda_graph_max_batch_size, graph_launch_overhead.
void add_launch_params(config::Schema& schema);
LaunchPolicy launch_policy(const config::Params& params);

}  // namespace ks::hw
