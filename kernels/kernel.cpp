#include "kernels/kernel.hpp"

namespace ks::kernels {

std::string_view op_name(OpKind op) {
  switch (op) {
    case OpKind::Embedding:
      return "embedding";
    case OpKind::RmsNorm:
      return "rms_norm";
    case OpKind::LayerNorm:
      return "layer_norm";
    case OpKind::Gemm:
      return "gemm";
    case OpKind::MoeTopK:
      return "moe_topk";
    case OpKind::MoeGemm:
      return "moe_gemm";
    case OpKind::MoeSum:
      return "moe_sum";
    case OpKind::Rope:
      return "rope";
    case OpKind::AttentionPrefill:
      return "attention_prefill";
    case OpKind::AttentionDecode:
      return "attention_decode";
    case OpKind::SiluMul:
      return "silu_mul";
    case OpKind::Gelu:
      return "gelu";
    case OpKind::Add:
      return "add";
    case OpKind::Sampling:
      return "sampling";
    case OpKind::AllReduce:
      return "all_reduce";
    case OpKind::AllGather:
      return "all_gather";
    case OpKind::AllToAll:
      return "all_to_all";
  }
  return "unknown";
}

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::Prefill:
      return "prefill";
    case Phase::Decode:
      return "decode";
    case Phase::Mixed:
      return "mixed";
  }
  return "unknown";
}

}  // namespace ks::kernels
