// Step decomposition of the non-Llama shapes: Mixtral's MoE layers and Phi's parallel block.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/step_decomposer.hpp"
#include "tests/support/kernel_lookup.hpp"

namespace ks::kernels {
namespace {

const ModelConfig& mixtral() { return *find_builtin_model("mixtral-8x7b"); }
const ModelConfig& phi2() { return *find_builtin_model("phi-2"); }

std::vector<std::string> names(const KernelList& list) { return ks::test_support::kernel_names(list); }
const Kernel& find(const KernelList& list, const std::string& name) {
  return ks::test_support::kernel_named(list, name);
}

double sum_over(const KernelList& kernels, bool (*pick)(const Kernel&),
                double Kernel::*field) {
  double total = 0;
  for (const Kernel& k : kernels) total += pick(k) ? k.*field : 0.0;
  return total;
}
bool is_matmul(const Kernel& k) { return k.op == OpKind::Gemm || k.op == OpKind::MoeGemm; }

TEST(MoeStep, MixtralLayerKernels) {
  StepBatch b;
  b.decode_contexts = {100, 200, 300};
  const StepKernels s = decompose_step(mixtral(), b, DType::BF16, DType::BF16);
  EXPECT_EQ(names(s.per_layer),
            (std::vector<std::string>{"input_layernorm", "qkv_proj", "rotary_emb",
                                      "attention_decode", "o_proj", "attn_residual_add",
                                      "post_attention_layernorm", "router", "moe_topk",
                                      "experts_gate_up", "silu_mul", "experts_down", "moe_sum",
                                      "mlp_residual_add"}));
  EXPECT_EQ(find(s.per_layer, "moe_topk").op, OpKind::MoeTopK);
  EXPECT_EQ(find(s.per_layer, "moe_sum").op, OpKind::MoeSum);
}

// Decode of 3 tokens: every token runs attention and 2 of 8 experts.
TEST(MoeStep, FlopsAndWeightBytesByHand) {
  StepBatch b;
  b.decode_contexts = {100, 200, 300};
  const StepKernels s = decompose_step(mixtral(), b, DType::BF16, DType::BF16);
  // Matmul parameters one token touches in a layer: Q,K,V,O (4096 x (4096 + 2 x 1024) and
  // 4096 x 4096), two experts of 3 x 4096 x 14336, the 4096 x 8 router.
  const double active = 4096.0 * 6144 + 4096.0 * 4096 + 2 * 3 * 4096.0 * 14336 + 4096.0 * 8;
  EXPECT_DOUBLE_EQ(sum_over(s.per_layer, is_matmul, &Kernel::flops), 2.0 * 3 * active);

  // 3 tokens x top-2 of 8 experts: expected distinct experts = 8 (1 - (6/8)^3) = 4.625.
  const double touched = 4.625;
  const Kernel& gate_up = find(s.per_layer, "experts_gate_up");
  EXPECT_EQ(gate_up.op, OpKind::MoeGemm);
  EXPECT_EQ(gate_up.m, 6);  // routed rows
  EXPECT_EQ(gate_up.n, 2 * 14336);
  EXPECT_EQ(gate_up.k, 4096);
  EXPECT_EQ(gate_up.groups, 5);
  EXPECT_DOUBLE_EQ(gate_up.flops, 2.0 * 6 * 28672 * 4096);
  EXPECT_DOUBLE_EQ(gate_up.bytes, 2.0 * (6 * 4096 + 6 * 28672) + touched * 28672 * 4096 * 2.0);
  const Kernel& down = find(s.per_layer, "experts_down");
  EXPECT_EQ(down.n, 4096);
  EXPECT_EQ(down.k, 14336);
  EXPECT_DOUBLE_EQ(down.bytes, 2.0 * (6 * 14336 + 6 * 4096) + touched * 4096 * 14336 * 2.0);
  const Kernel& router = find(s.per_layer, "router");
  EXPECT_EQ(router.n, 8);
  EXPECT_DOUBLE_EQ(router.flops, 2.0 * 3 * 8 * 4096);
  EXPECT_EQ(find(s.per_layer, "silu_mul").m, 6);
  EXPECT_DOUBLE_EQ(find(s.per_layer, "moe_sum").bytes, 2.0 * (6 * 4096 + 3 * 4096));
}

TEST(MoeStep, LargeBatchReadsEveryExpertOnce) {
  StepBatch b;
  b.prefills = {{4096, 0}};
  const StepKernels s = decompose_step(mixtral(), b, DType::FP8, DType::FP8);
  const Kernel& gate_up = find(s.per_layer, "experts_gate_up");
  EXPECT_EQ(gate_up.groups, 8);
  EXPECT_EQ(gate_up.dtype, DType::FP8);
  // fp8 weights (1 byte) for all 8 experts; 16-bit activations for 8192 routed rows.
  EXPECT_NEAR(gate_up.bytes, 2.0 * 8192 * (4096 + 28672) + 8.0 * 28672 * 4096, 1.0);
  // Every token through its 2 experts: 8192 routed rows, whatever the routing.
  EXPECT_DOUBLE_EQ(gate_up.flops, 2.0 * (4096 * 2) * 28672 * 4096);
  // The router stays 16-bit under fp8 weights.
  EXPECT_EQ(find(s.per_layer, "router").dtype, DType::BF16);
}

TEST(MoeStep, TensorParallelShardsExpertsNotRouter) {
  StepBatch b;
  b.decode_contexts = {64};
  const StepKernels s = decompose_step(mixtral(), b, DType::BF16, DType::BF16, {2, 1});
  EXPECT_EQ(find(s.per_layer, "experts_gate_up").n, 14336);
  EXPECT_EQ(find(s.per_layer, "experts_down").k, 7168);
  EXPECT_EQ(find(s.per_layer, "router").n, 8);
  EXPECT_NO_THROW(find(s.per_layer, "mlp_all_reduce"));
  EXPECT_NO_THROW(find(s.per_layer, "attn_all_reduce"));
}

TEST(PhiStep, ParallelBlockWithLayerNormGeluAndBiases) {
  StepBatch b;
  b.prefills = {{10, 0}};
  const StepKernels s = decompose_step(phi2(), b, DType::FP16, DType::FP16);
  EXPECT_EQ(names(s.per_layer),
            (std::vector<std::string>{"input_layernorm", "qkv_proj", "rotary_emb",
                                      "attention_prefill", "o_proj", "up_proj", "gelu",
                                      "down_proj", "residual_add"}));
  const Kernel& ln = find(s.per_layer, "input_layernorm");
  EXPECT_EQ(ln.op, OpKind::LayerNorm);
  EXPECT_DOUBLE_EQ(ln.bytes, 2.0 * (2 * 10 * 2560 + 2 * 2560));  // rows in/out, weight + bias
  const Kernel& qkv = find(s.per_layer, "qkv_proj");
  EXPECT_DOUBLE_EQ(qkv.flops, 2.0 * 10 * 7680 * 2560 + 10 * 7680);  // + bias adds
  EXPECT_DOUBLE_EQ(qkv.bytes, 2.0 * (10 * 2560 + 10 * 7680 + 2560.0 * 7680 + 7680));
  // Rope over 32 of each head's 80 dims, for 32 Q and 32 K heads.
  EXPECT_EQ(find(s.per_layer, "rotary_emb").n, 64 * 32);
  EXPECT_DOUBLE_EQ(find(s.per_layer, "residual_add").bytes, 4.0 * 10 * 2560 * 2);
  // Matmul FLOPs per layer: 2 x tokens x (4 h^2 + 2 h x 4h) plus one add per biased output.
  const double matmul = 4.0 * 2560 * 2560 + 2.0 * 2560 * 10240;
  const double biases = 7680 + 2560 + 10240 + 2560;
  EXPECT_DOUBLE_EQ(sum_over(s.per_layer, is_matmul, &Kernel::flops),
                   2.0 * 10 * matmul + 10 * biases);
  EXPECT_EQ(find(s.post, "final_layernorm").op, OpKind::LayerNorm);
  EXPECT_DOUBLE_EQ(find(s.post, "lm_head").flops, 2.0 * 51200 * 2560 + 51200);
}

}  // namespace
}  // namespace ks::kernels
