#include "serving/memory_plan.hpp"

#include <gtest/gtest.h>

#include "kernels/model_config.hpp"

using namespace ks::serving;

TEST(MemoryPlan, KvCacheIsWhatRemainsAfterWeightsAndActivations) {
  const auto* model = ks::kernels::find_builtin_model("llama-3-8b");
  ASSERT_NE(model, nullptr);
  MemoryInputs in;
  in.gpu_memory_bytes = 80.0 * (1ull << 30);
  in.gpu_memory_utilization = 0.9;
  in.block_size = 16;
  const MemoryPlan plan = plan_memory(*model, in);
  // Llama-3-8B: 8.03e9 parameters in bf16; KV per token = 32 layers * 2 (K,V) * 8 kv heads * 128 * 2 B.
  EXPECT_NEAR(plan.weight_bytes, 8.03e9 * 2, 0.01e9 * 2);
  EXPECT_DOUBLE_EQ(plan.kv_bytes_per_token, 32.0 * 2 * 8 * 128 * 2);
  EXPECT_DOUBLE_EQ(plan.usable_bytes, 0.9 * 80.0 * (1ull << 30));
  EXPECT_NEAR(plan.kv_bytes, plan.usable_bytes - plan.weight_bytes - plan.workspace_bytes, 1.0);
  EXPECT_EQ(plan.kv_blocks, static_cast<std::int64_t>(plan.kv_bytes / (plan.kv_bytes_per_token * 16)));
  EXPECT_EQ(plan.kv_tokens, plan.kv_blocks * 16);
  // Half the KV bytes per token with tp=2 (and half the weights).
  in.tp = 2;
  const MemoryPlan tp2 = plan_memory(*model, in);
  EXPECT_DOUBLE_EQ(tp2.kv_bytes_per_token, plan.kv_bytes_per_token / 2);
  EXPECT_DOUBLE_EQ(tp2.weight_bytes, plan.weight_bytes / 2);
}

// TensorRT-LLM's free_gpu_memory_fraction: a fraction of what the weights and activations leave
// of the whole memory. For a 70B model on two 80 GiB GPUs that is about twice vLLM's cache.
TEST(MemoryPlan, FreeMemoryFractionSizesTheCacheFromWhatTheWeightsLeave) {
  const auto* model = ks::kernels::find_builtin_model("llama-2-70b");
  ASSERT_NE(model, nullptr);
  MemoryInputs in;
  in.gpu_memory_bytes = 80.0 * (1ull << 30);
  in.tp = 2;
  const MemoryPlan vllm = plan_memory(*model, in);
  in.kv_free_memory_fraction = 0.9;
  const MemoryPlan trt = plan_memory(*model, in);
  EXPECT_DOUBLE_EQ(trt.weight_bytes, vllm.weight_bytes);
  EXPECT_NEAR(trt.kv_bytes, 0.9 * (in.gpu_memory_bytes - trt.weight_bytes - trt.workspace_bytes), 1.0);
  EXPECT_GT(trt.kv_blocks, 3 * vllm.kv_blocks / 2);
  // Not enough left for a single block is the same clear error either way, without the vLLM
  // utilisation in it.
  in.tp = 1;
  try {
    plan_memory(*model, in);
    FAIL() << "70B parameters in bf16 cannot fit 80 GiB";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("does not fit: 80.00 GiB GPU memory, weights need 128."), std::string::npos) << msg;
    EXPECT_EQ(msg.find("utilisation"), std::string::npos) << msg;
  }
}

TEST(MemoryPlan, AModelThatDoesNotFitSaysByHowMuch) {
  const auto* model = ks::kernels::find_builtin_model("llama-2-70b");
  ASSERT_NE(model, nullptr);
  MemoryInputs in;
  in.gpu_memory_bytes = 80.0 * (1ull << 30);
  try {
    plan_memory(*model, in);
    FAIL() << "70B parameters in bf16 cannot fit 80 GiB";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
    EXPECT_NE(msg.find("GiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("weights need 128."), std::string::npos) << msg;  // 68.98e9 * 2 B = 128.5 GiB
  }
}

TEST(MemoryPlan, PipelineStagesHoldTheirLayersAndTheCacheFollowsTheTightestStage) {
  const auto* model = ks::kernels::find_builtin_model("llama-2-70b");
  ASSERT_NE(model, nullptr);
  MemoryInputs in;
  in.gpu_memory_bytes = 80.0 * (1ull << 30);
  in.tp = 4;
  in.pp = 2;
  const std::vector<MemoryPlan> stages = plan_stage_memory(*model, in);
  ASSERT_EQ(stages.size(), 2u);
  // 80 layers: 40 + 40. Per GPU: its layers' weights / tp, plus the embedding (stage 0) or the
  // LM head and final norm (stage 1); KV for its 40 layers only.
  const double layer = static_cast<double>(model->layer_parameter_count()) * 2;
  const double vocab = static_cast<double>(model->vocab_size) * model->hidden_size * 2;
  EXPECT_EQ(stages[0].layers, 40);
  EXPECT_EQ(stages[1].first_layer, 40);
  EXPECT_DOUBLE_EQ(stages[0].weight_bytes, (40 * layer + vocab) / 4);
  EXPECT_DOUBLE_EQ(stages[1].weight_bytes, (40 * layer + vocab + model->hidden_size * 2.0) / 4);
  EXPECT_DOUBLE_EQ(stages[0].kv_bytes_per_token, 40.0 * 2 * 8 * 128 * 2 / 4);
  // The last stage also keeps the logits workspace: fewer blocks, and it sets the replica's cache.
  EXPECT_LT(stages[1].kv_blocks, stages[0].kv_blocks);
  EXPECT_EQ(plan_memory(*model, in).kv_blocks, stages[1].kv_blocks);
  // Half the layers per GPU: more than twice the KV tokens of tp=4 alone (weights shrink too).
  in.pp = 1;
  EXPECT_GT(stages[1].kv_tokens, 2 * plan_memory(*model, in).kv_tokens);
}

TEST(MemoryPlan, APipelineThatDoesNotFitGivesEveryStagesNumbers) {
  const auto* model = ks::kernels::find_builtin_model("llama-2-70b");
  ASSERT_NE(model, nullptr);
  MemoryInputs in;
  in.gpu_memory_bytes = 40.0 * (1ull << 30);
  in.pp = 2;  // 35 B parameters (70 GB in bf16) per stage on a 40 GiB GPU
  try {
    plan_stage_memory(*model, in);
    FAIL() << "half of a 70B model in bf16 cannot fit 40 GiB";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("does not fit in 2 pipeline stages"), std::string::npos) << msg;
    EXPECT_NE(msg.find("stage 0 (layers 0-39)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("stage 1 (layers 40-79)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("weights"), std::string::npos) << msg;
  }
}
