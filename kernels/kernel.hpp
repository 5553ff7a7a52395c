#pragma once
// One GPU kernel of a serving step, described by what a cost model needs: operation, shape,
// work (FLOPs) and HBM traffic (bytes).
#include <cstdint>
#include <string_view>

#include "kernels/dtype.hpp"

namespace ks::kernels {

enum class OpKind {
  Embedding,
  RmsNorm,
  LayerNorm,  // mean/variance normalisation with weight and bias (Phi)
  Gemm,       // includes the LM head (name "lm_head") and the MoE router
  // MoE (vLLM fused_moe): top-k softmax over the router logits plus the sort of routed rows by
  // expert; one grouped GEMM per expert matrix over all experts; the weighted sum of each
  // token's k expert outputs.
  MoeTopK,
  MoeGemm,
  MoeSum,
  Rope,
  AttentionPrefill,
  AttentionDecode,
  SiluMul,
  Gelu,
  Add,
  Sampling,
  AllReduce,  // collectives: priced by the interconnect model, not the roofline
  AllGather,
  // Expert parallelism's dispatch and combine: each rank sends the routed rows of its tokens to
  // the ranks holding their experts (bytes = the rank's send buffer, (ep-1)/ep of it remote).
  AllToAll,
};

// Which part of the batch a kernel serves; shared kernels of a mixed batch are Mixed.
enum class Phase { Prefill, Decode, Mixed };

struct Kernel {
  OpKind op;
  const char* name;  // static string, stable per kernel role ("qkv_proj"); never freed
  DType dtype;       // compute dtype: selects the peak FLOP/s
  // Shape, by kind. Gemm: [m x k] . [k x n]. Attention: m = query tokens, n = key/value tokens
  // read (summed over sequences), k = head_dim. Elementwise/norm: m = tokens, n = row width.
  // Collectives: m = tokens, n = row width of the reduced/gathered tensor.
  // MoeGemm: m = routed rows summed over experts (tokens x top_k), n x k = one expert's matrix.
  std::int64_t m = 0, n = 0, k = 0;
  double flops = 0;
  // HBM traffic (reads + writes). For collectives: the size of the full tensor per rank, as in
  // nccl-tests' "size".
  double bytes = 0;
  Phase phase = Phase::Mixed;
  // MoeGemm: experts whose weights are read (expected count, rounded; >= 1); 1 otherwise.
  // Average rows per expert = m / groups.
  std::int64_t groups = 1;
  // Independent problems of the same shape in one launch (batched GEMM); for attention the
  // sequences of the batch (m and n are summed over them); 1 otherwise.
  std::int64_t batch = 1;
  // Attention: query heads on this GPU (FLOPs and bytes count them; the kernel's parallelism
  // over the SMs is sequences x heads). 0 when unknown (kernels built by a plug-in).
  std::int64_t heads = 0;
  // Attention: key/value heads on this GPU (bytes count them). Some decode kernels pack a
  // grouped-query group into one CTA per (sequence, KV head), others run one per query head: the
  // decode residual sees both counts. 0 when unknown (then counted as `heads`).
  std::int64_t kv_heads = 0;
  // Narrow-dtype GEMMs: the activations arrive quantised by a kernel of their own (a block-scaled
  // model's fp8_act_quant). false: the GEMM quantises its 16-bit input itself, as an engine's fp8
  // or fp4 linear layer does (KernelFeatures::t_quant).
  bool quantised_input = false;
};

std::string_view op_name(OpKind op);
std::string_view phase_name(Phase phase);

inline bool is_collective(OpKind op) {
  return op == OpKind::AllReduce || op == OpKind::AllGather || op == OpKind::AllToAll;
}

}  // namespace ks::kernels
