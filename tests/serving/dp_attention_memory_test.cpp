// Attention data parallelism's memory plan: weights replicated but for the routed experts, and
// one KV cache per rank (tests/kernels/dp_attention_test.cpp has its kernels).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/model_config.hpp"
#include "serving/memory_plan.hpp"

namespace ks::serving {
namespace {

// MLA's latent is replicated on every TP rank (the cache holds one copy per GPU), so TP8's
// replica caches what one GPU holds; under DP attention each GPU caches its own sequences, so
// the replica holds 8 GPUs' worth, less what the replicated attention weights take.
TEST(DpAttention, MlaKvCapacityGrowsWithTheRanks) {
  kernels::ModelConfig ds = *kernels::find_builtin_model("deepseek-v3");
  ds.weight_block_size = 0;  // per-tensor fp8 scales: 1 byte a weight
  MemoryInputs in;
  in.gpu_memory_bytes = 141e9;  // H200
  in.gpu_memory_utilization = 0.9;
  in.weight_dtype = kernels::DType::FP8;
  in.kv_dtype = kernels::DType::BF16;
  in.tp = 8;
  const MemoryPlan tp = plan_memory(ds, in);
  in.dp_attention = true;
  const MemoryPlan dp = plan_memory(ds, in);
  // Routed experts: 58 MoE layers x 256 experts x 3 x 7168 x 2048 = 653,908,770,816 parameters.
  const double routed = 58.0 * 256 * 3 * 7168 * 2048;
  EXPECT_DOUBLE_EQ(static_cast<double>(ds.routed_expert_parameter_count()), routed);
  const double total = static_cast<double>(ds.parameter_count());
  EXPECT_DOUBLE_EQ(tp.weight_bytes, total / 8);                    // fp8: 1 byte each
  EXPECT_DOUBLE_EQ(dp.weight_bytes, total - routed + routed / 8);  // 32 of 256 experts, the rest whole
  // Activations: 8192 tokens x 2 x (4 x 7168 + 2 x 18432 / t) bytes (t = 8 under TP, 1 under DP).
  EXPECT_DOUBLE_EQ(tp.workspace_bytes, 8192.0 * 2 * (4 * 7168 + 2 * 18432 / 8) + 4.0 * 256 * 129280);
  EXPECT_DOUBLE_EQ(dp.workspace_bytes, 8192.0 * 2 * (4 * 7168 + 2 * 18432) + 4.0 * 256 * 129280);
  // 61 layers x 576 x 2 bytes = 70,272 bytes a token on a GPU either way; blocks of 16.
  EXPECT_DOUBLE_EQ(tp.kv_bytes_per_token, 70272.0);
  EXPECT_DOUBLE_EQ(dp.kv_bytes_per_token, 70272.0);
  const double usable = 141e9 * 0.9;
  EXPECT_EQ(tp.kv_blocks, static_cast<std::int64_t>(std::floor((usable - total / 8 - tp.workspace_bytes) / (70272.0 * 16))));
  EXPECT_EQ(dp.kv_ranks, 8);
  EXPECT_EQ(dp.kv_blocks, 8 * static_cast<std::int64_t>(std::floor(
                                  (usable - (total - routed + routed / 8) - dp.workspace_bytes) / (70272.0 * 16))));
  EXPECT_EQ(dp.kv_tokens, dp.kv_blocks * 16);
  // About 5.6x the tokens: 8 caches, each smaller by the replicated ~17 GB of non-expert weights.
  const double gain = static_cast<double>(dp.kv_blocks) / static_cast<double>(tp.kv_blocks);
  EXPECT_GT(gain, 5.0);
  EXPECT_LT(gain, 8.0);
}

// fp8 with 128 x 128 block scales (the shipped config's quantization_config): 1 + 4 / 16384 bytes
// a weight.
TEST(Fp8Block, MemoryPlanCountsTheScaleBytes) {
  const kernels::ModelConfig& ds = *kernels::find_builtin_model("deepseek-v3");
  MemoryInputs in;
  in.gpu_memory_bytes = 141e9;
  in.weight_dtype = kernels::DType::FP8;
  in.tp = 8;
  const double total = static_cast<double>(ds.parameter_count());
  EXPECT_DOUBLE_EQ(plan_memory(ds, in).weight_bytes, total * (1 + 4.0 / 16384) / 8);
  in.dp_attention = true;
  const double routed = 58.0 * 256 * 3 * 7168 * 2048;
  EXPECT_DOUBLE_EQ(plan_memory(ds, in).weight_bytes, (total - routed + routed / 8) * (1 + 4.0 / 16384));
}

}  // namespace
}  // namespace ks::serving
