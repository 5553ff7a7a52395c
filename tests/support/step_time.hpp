#pragma once
// Test helper: the time of one engine step under the host's asynchronous launch semantics,
// computed independently of the simulator. Kernel i is issued at prepare + (i + 1) x launch and
// starts when it is issued and the previous kernel has finished; the step ends when the GPU is
// done (or the host, if later), plus the finish overhead.
#include <algorithm>
#include <functional>

#include "kernels/step_decomposer.hpp"

namespace ks::test_support {

struct AsyncStepTime {
  double seconds;        // the whole step
  double gpu_wait_s;     // host idle after its last launch, waiting for the GPU
};

inline AsyncStepTime async_step_time(const kernels::StepKernels& step, double prepare_s, double launch_s,
                                     double finish_s,
                                     const std::function<double(const kernels::Kernel&)>& kernel_seconds) {
  double t = prepare_s, gpu_free = 0;
  auto one = [&](const kernels::Kernel& k) {
    t += launch_s;
    gpu_free = std::max(t, gpu_free) + kernel_seconds(k);
  };
  for (const auto& k : step.pre) one(k);
  for (int l = 0; l < step.num_layers; ++l)
    for (const auto& k : step.per_layer) one(k);
  for (const auto& k : step.post) one(k);
  return {std::max(t, gpu_free) + finish_s, std::max(0.0, gpu_free - t)};
}

}  // namespace ks::test_support
