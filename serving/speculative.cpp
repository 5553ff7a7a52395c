#include "serving/speculative.hpp"

#include <stdexcept>
#include <utility>

namespace ks::serving {

const char* spec_method_name(SpecMethod method) {
  switch (method) {
    case SpecMethod::DraftModel: return "draft_model";
    case SpecMethod::Ngram: return "ngram";
    case SpecMethod::Eagle: return "eagle";
    case SpecMethod::Mtp: return "mtp";
  }
  return "?";
}

AcceptanceModel::AcceptanceModel(std::vector<double> conditional) : p_(std::move(conditional)) {
  if (p_.empty()) throw std::invalid_argument("acceptance needs at least one position");
  for (std::size_t i = 0; i < p_.size(); ++i)
    if (!(p_[i] >= 0.0 && p_[i] <= 1.0))
      throw std::invalid_argument("acceptance of position " + std::to_string(i + 1) + " must be in [0, 1], got " +
                                  std::to_string(p_[i]));
}

AcceptanceModel AcceptanceModel::constant(double rate, int k) {
  if (k < 1) throw std::invalid_argument("num_speculative_tokens must be >= 1, got " + std::to_string(k));
  return AcceptanceModel(std::vector<double>(static_cast<std::size_t>(k), rate));
}

std::int64_t AcceptanceModel::sample(std::int64_t drafts, util::Rng& rng) const {
  if (drafts < 0 || drafts > k())
    throw std::invalid_argument("drafts must be in [0, " + std::to_string(k()) + "], got " + std::to_string(drafts));
  std::int64_t accepted = 0;
  while (accepted < drafts && rng.uniform() < p_[static_cast<std::size_t>(accepted)]) ++accepted;
  return accepted;
}

double AcceptanceModel::expected_accepted(std::int64_t drafts) const {
  double run = 1.0, sum = 0.0;
  for (std::int64_t i = 0; i < drafts && i < k(); ++i) {
    run *= p_[static_cast<std::size_t>(i)];
    sum += run;
  }
  return sum;
}

kernels::ModelConfig speculative_head(const kernels::ModelConfig& target) {
  kernels::ModelConfig head = target;
  head.name = target.name + " head";
  head.num_layers = 1;
  return head;
}

double proposer_weight_bytes(const SpecDecodeConfig& spec, kernels::DType weight_dtype, int tp) {
  const double b = kernels::dtype_bytes(weight_dtype);
  switch (spec.method) {
    case SpecMethod::Ngram: return 0.0;
    case SpecMethod::DraftModel: return spec.draft.weight_bytes(weight_dtype) / tp;
    case SpecMethod::Eagle:
    case SpecMethod::Mtp: {
      const double h = spec.draft.hidden_size;
      const double fc = spec.head_fc ? 2.0 * h * h : 0.0;
      return (static_cast<double>(spec.draft.layer_parameter_count()) + fc) * b / tp;
    }
  }
  return 0.0;
}

double proposer_kv_bytes_per_token(const SpecDecodeConfig& spec, kernels::DType kv_dtype, int tp) {
  if (spec.method == SpecMethod::Ngram) return 0.0;
  return spec.draft.kv_bytes_per_token(kv_dtype) / tp;
}

}  // namespace ks::serving
