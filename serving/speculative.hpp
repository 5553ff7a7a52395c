#pragma once
// Speculative decoding: what proposes the drafts, how many, and how many of them the target
// accepts. Pure C++ (no SystemC): the acceptance model is tested without a simulation; the
// replica (serving/replica.cpp) prices the proposer and the verification as kernels, and the
// scheduler (serving/batch_scheduler.cpp) reserves and frees the KV of the drafts.
//
// Per engine step, every decoding sequence carries its last token and up to k drafts: the
// proposer runs first (a draft model: k autoregressive passes priced as its own kernels; an
// EAGLE/MTP head: k passes of one transformer layer plus the target's LM head; n-gram prompt
// lookup: a CPU cost, no kernels), then the target verifies k+1 tokens per sequence in one
// forward pass (GEMM M = sum of the queries, decode attention with k+1 queries per sequence).
// The number of accepted drafts is drawn from the acceptance model with the replica's seeded
// RNG; the sequence emits accepted + 1 tokens (the bonus token), and the KV blocks of the
// rejected drafts are freed.
#include <cstdint>
#include <string>
#include <vector>

#include "base/util/rng.hpp"
#include "kernels/model_config.hpp"

namespace ks::serving {

enum class SpecMethod { DraftModel, Ngram, Eagle, Mtp };

// "draft_model", "ngram", "eagle", "mtp".
const char* spec_method_name(SpecMethod method);

// Acceptance of drafts 1..k as conditional probabilities: p[i] is the probability that draft
// i+1 is accepted given that drafts 1..i were (verification stops at the first rejection).
// A constant rate a is p = {a, a, ..., a} (per-position i.i.d.).
class AcceptanceModel {
 public:
  AcceptanceModel() = default;
  // Throws std::invalid_argument unless every p is in [0, 1] and there is at least one.
  explicit AcceptanceModel(std::vector<double> conditional);
  static AcceptanceModel constant(double rate, int k);

  int k() const { return static_cast<int>(p_.size()); }
  const std::vector<double>& conditional() const { return p_; }
  // Accepted drafts among the first `drafts` (0 <= drafts <= k): position by position, a uniform
  // draw below p accepts it, the first one above ends the run.
  std::int64_t sample(std::int64_t drafts, util::Rng& rng) const;
  // Expected accepted drafts of the first `drafts`: sum over i of p[0] * ... * p[i-1].
  double expected_accepted(std::int64_t drafts) const;
  // Expected tokens a verification of k drafts emits, the bonus token included (vLLM's "mean
  // acceptance length"): 1 + expected_accepted(k). For a constant rate a:
  // (1 - a^(k+1)) / (1 - a).
  double mean_acceptance_length() const { return 1.0 + expected_accepted(k()); }

 private:
  std::vector<double> p_;
};

struct SpecDecodeConfig {
  SpecMethod method = SpecMethod::Ngram;
  int num_speculative_tokens = 0;  // k
  AcceptanceModel acceptance;      // k positions
  // draft_model: the draft model. eagle / mtp: the head, a one-layer copy of the target whose
  // LM head is the target's (kernels priced with this config, plus `head_fc`).
  kernels::ModelConfig draft;
  bool head_fc = false;  // eagle / mtp: the fusion GEMM [2 hidden -> hidden] before the layer
  double ngram_seconds_per_sequence = 0;  // ngram: CPU time of the prompt lookup per sequence
};

// The head of EAGLE / MTP: the target's shape with one layer (vocabulary and LM head shared).
kernels::ModelConfig speculative_head(const kernels::ModelConfig& target);

// Extra GPU memory of the proposer, per GPU of a replica with tensor parallelism `tp`:
// the draft's weights (for a head: its layer and fusion GEMM; the LM head is shared) and its KV
// per token (the draft's layers live in the same block table as the target's, as in vLLM).
double proposer_weight_bytes(const SpecDecodeConfig& spec, kernels::DType weight_dtype, int tp);
double proposer_kv_bytes_per_token(const SpecDecodeConfig& spec, kernels::DType kv_dtype, int tp);

}  // namespace ks::serving
