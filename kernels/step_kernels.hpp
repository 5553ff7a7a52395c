#pragma once
// The kernels of one engine step on one GPU: a plain value (the TLM contract's StepLaunch carries
// a copy; proto/ includes this header, not the decomposer that fills it: step_decomposer.hpp).
// Each list shares its immutable chunks with the step it was derived from (kernel_list.hpp): a
// step whose only change is attention has new attention chunks and the same others, which is
// all a consumer needs to keep what it derived from the others.
#include "kernels/kernel_list.hpp"

namespace ks::kernels {

struct StepKernels {
  KernelList pre;        // embedding (+ its all-reduce under TP); first pipeline stage only
  KernelList per_layer;  // one transformer layer in execution order; layers are identical
  int num_layers = 0;    // layers on the busiest pipeline stage (ceil(layers / pp))
  KernelList post;       // final norm, lm_head, logits gather, sampling; last stage only
};

}  // namespace ks::kernels
