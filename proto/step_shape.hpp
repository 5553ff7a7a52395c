#pragma once
// What the host's per-step costs depend on: how many sequences and tokens a step carries, whether
// it is decode only (CUDA graphs replay only those), and the replica's TP degree. Pure C++.
#include <cstdint>

#include "kernels/step.hpp"

namespace ks::proto {

struct StepShape {
  std::int64_t sequences = 0;  // prefill chunks + decode sequences
  std::int64_t tokens = 0;     // tokens through the dense layers
  bool pure_decode = false;    // no prefill chunk in the step
  int tp = 1;
};

inline StepShape step_shape(const kernels::StepBatch& batch, int tp) {
  StepShape s;
  s.sequences = static_cast<std::int64_t>(batch.prefills.size() + batch.decode_contexts.size());
  s.tokens = batch.num_tokens();
  s.pure_decode = batch.prefills.empty() && !batch.decode_contexts.empty();
  s.tp = tp;
  return s;
}

}  // namespace ks::proto
