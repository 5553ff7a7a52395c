#pragma once
// The kernels of one engine step on one GPU: a plain value (the TLM contract's StepLaunch carries
// a copy; proto/ includes this header, not the decomposer that fills it: step_decomposer.hpp).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kernel.hpp"

namespace ks::kernels {

struct StepKernels {
  std::vector<Kernel> pre;  // embedding (+ its all-reduce under TP); first pipeline stage only
  std::vector<Kernel> per_layer;  // one transformer layer in execution order; layers are identical
  int num_layers = 0;             // layers on the busiest pipeline stage (ceil(layers / pp))
  std::vector<Kernel> post;       // final norm, lm_head, logits gather, sampling; last stage only
  // Change report, for consumers that keep what they derived from an earlier refill (the GPU's
  // prices): every refill gets a new process-wide `version`. base != 0: the lists equal those of
  // version `base` except per_layer[changed_begin, changed_end) (StepDecomposer, when only the
  // attention kernels moved); base 0: anything may have changed. Kept because dropping it (the
  // GPU comparing every kernel, the host copying whole steps) costs 8-22% on the bench cases
  // (docs/performance.md).
  std::uint64_t version = 0, base = 0;
  std::size_t changed_begin = 0, changed_end = 0;
};

}  // namespace ks::kernels
