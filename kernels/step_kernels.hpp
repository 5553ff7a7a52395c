#pragma once
// The kernels of one engine step on one GPU: a plain value (the TLM contract's StepLaunch carries
// a copy; proto/ includes this header, not the decomposer that fills it: step_decomposer.hpp).
#include <vector>

#include "kernels/kernel.hpp"

namespace ks::kernels {

struct StepKernels {
  std::vector<Kernel> pre;  // embedding (+ its all-reduce under TP); first pipeline stage only
  std::vector<Kernel> per_layer;  // one transformer layer in execution order; layers are identical
  int num_layers = 0;             // layers on the busiest pipeline stage (ceil(layers / pp))
  std::vector<Kernel> post;       // final norm, lm_head, logits gather, sampling; last stage only
  // A plain value: consumers that keep what they derived from an earlier step (the GPU's prices)
  // recognise unchanged kernels by their content, not by a change report.
};

}  // namespace ks::kernels
