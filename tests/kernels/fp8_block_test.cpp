// fp8 block-scaled weights (DeepSeek-V3's quantization_config {quant_method: fp8,
// weight_block_size: [128, 128]}): one fp32 scale per 128 x 128 block of every weight matrix, and
// the per-token-group (1 x 128) activation quantisation before each block-scaled GEMM.
// Expectations by hand from the public config.json values.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/hf_config.hpp"
#include "kernels/spec_error.hpp"
#include "kernels/step_decomposer.hpp"
#include "tests/support/kernel_lookup.hpp"

namespace ks::kernels {
namespace {

using test_support::kernel_named;

// The kernel just before `name` in `ks`.
const Kernel& before(const KernelList& ks, const std::string& name) {
  const Kernel* previous = nullptr;
  for (const Kernel& k : ks) {
    if (name == k.name && previous != nullptr) return *previous;
    previous = &k;
  }
  throw std::runtime_error("nothing before " + name);
}

const std::string kUserConfig = R"({
  "architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 1024, "intermediate_size": 2048,
  "num_hidden_layers": 4, "num_attention_heads": 8, "vocab_size": 1000, "kv_lora_rank": 128,
  "q_lora_rank": 256, "qk_rope_head_dim": 64, "qk_nope_head_dim": 64, "v_head_dim": 64,
  "n_routed_experts": 16, "num_experts_per_tok": 2, "moe_intermediate_size": 256,
  "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}
})";

TEST(Fp8Block, ConfigsCarryTheirBlockSize) {
  EXPECT_EQ(find_builtin_model("deepseek-v3")->weight_block_size, 128);  // data/models/deepseek-v3.json
  EXPECT_EQ(find_builtin_model("qwen3-30b-a3b")->weight_block_size, 0);
  EXPECT_EQ(parse_hf_config(kUserConfig, "user.json", "user").weight_block_size, 128);
  // Another method (or fp8 without blocks) leaves per-tensor scales.
  std::string awq = kUserConfig;
  awq.replace(awq.find("\"fp8\""), 5, "\"awq\"");
  EXPECT_EQ(parse_hf_config(awq, "awq.json", "awq").weight_block_size, 0);
  std::string bad = kUserConfig;
  bad.replace(bad.find("[128, 128]"), 10, "[128, 64]");
  try {
    parse_hf_config(bad, "bad.json", "bad");
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.json"), std::string::npos) << what;
    EXPECT_NE(what.find("quantization_config"), std::string::npos) << what;
    EXPECT_NE(what.find("[128,64]"), std::string::npos) << what;
  }
}

// One fp8 byte plus a 4-byte scale per 128 x 128 = 16384 weights: 1.000244140625 bytes a weight.
TEST(Fp8Block, WeightBytesCountTheScales) {
  const ModelConfig& ds = *find_builtin_model("deepseek-v3");
  EXPECT_DOUBLE_EQ(ds.weight_element_bytes(DType::FP8), 1.000244140625);
  EXPECT_DOUBLE_EQ(ds.weight_element_bytes(DType::BF16), 2.0);  // blocks only apply to fp8
  ModelConfig tensor = ds;
  tensor.weight_block_size = 0;
  EXPECT_DOUBLE_EQ(tensor.weight_element_bytes(DType::FP8), 1.0);
}

// DeepSeek-V3 TP8 + EP8, 64 decodes: q_b_proj is [64 x 1536] . [1536 x 16 x 192 = 3072] at fp8.
TEST(Fp8Block, GemmsReadScaledWeightsAfterAQuantisationKernel) {
  const ModelConfig& ds = *find_builtin_model("deepseek-v3");
  StepBatch b;
  b.decode_contexts.assign(64, 1000);
  const StepKernels k = decompose_step(ds, b, DType::FP8, DType::BF16, {8, 1, 8, 1.0});
  const auto& L = k.per_layer;
  const Kernel& g = kernel_named(L, "q_b_proj");
  EXPECT_EQ(g.dtype, DType::FP8);
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 64 * 3072 * 1536);
  // Input fp8 + one scale per 128 values, output bf16, weights fp8 + block scales.
  EXPECT_DOUBLE_EQ(g.bytes, 64.0 * 1536 * (1 + 4.0 / 128) + 64.0 * 3072 * 2 + 3072.0 * 1536 * 1.000244140625);
  const Kernel& q = before(L, "q_b_proj");
  EXPECT_STREQ(q.name, "fp8_act_quant");
  EXPECT_EQ(q.m, 64);
  EXPECT_EQ(q.n, 1536);
  // Reads bf16, writes fp8 and 1536 / 128 = 12 fp32 scales a token.
  EXPECT_DOUBLE_EQ(q.bytes, 64.0 * 1536 * 2 + 64.0 * 1536 + 64.0 * 12 * 4);
  // One before each block-scaled GEMM of the MoE layer in decode: qkv_a_proj, q_b_proj, o_proj,
  // the experts' input (the rank's 8 tokens of 7168) and SiLU output (64 rows of 2048), the
  // shared expert's two. The router stays 16-bit.
  EXPECT_EQ(std::count_if(L.begin(), L.end(), [](const Kernel& x) { return std::string(x.name) == "fp8_act_quant"; }), 7);
  EXPECT_EQ(before(L, "router").op, OpKind::RmsNorm);
  EXPECT_EQ(before(L, "moe_dispatch").m, 8);
  EXPECT_EQ(before(L, "moe_dispatch").n, 7168);
  const Kernel& down_q = before(L, "experts_down");
  EXPECT_EQ(down_q.m, 64);
  EXPECT_DOUBLE_EQ(down_q.bytes, 64.0 * 2048 * 3 + 64.0 * 16 * 4);
  // The grouped GEMM reads its fp8 input and scales: rows 64 x 7168.
  const Kernel& up = kernel_named(L, "experts_gate_up");
  ModelConfig tensor = ds;
  tensor.weight_block_size = 0;
  const StepKernels per_tensor = decompose_step(tensor, b, DType::FP8, DType::BF16, {8, 1, 8, 1.0});
  const Kernel& up0 = kernel_named(per_tensor.per_layer, "experts_gate_up");
  EXPECT_NEAR(up.bytes - up0.bytes,
              64.0 * 7168 * (1 + 4.0 / 128 - 2) + up0.groups * 0.0 +
                  (up0.bytes - (64.0 * 7168 + 64.0 * 4096) * 2) * (4.0 / 16384),
              1.0);
  // The GEMMs behind a quantisation kernel say so: their price has no quantisation pass of its own
  // (KernelFeatures::t_quant). Per-tensor fp8 GEMMs quantise their input themselves.
  EXPECT_TRUE(g.quantised_input);
  EXPECT_TRUE(up.quantised_input);
  EXPECT_FALSE(up0.quantised_input);
  EXPECT_FALSE(kernel_named(per_tensor.per_layer, "q_b_proj").quantised_input);
  // Per-tensor fp8 has no quantisation kernel.
  const auto& L0 = per_tensor.per_layer;
  EXPECT_FALSE(std::any_of(L0.begin(), L0.end(), [](const Kernel& x) { return std::string(x.name) == "fp8_act_quant"; }));
  // Under bf16 the config's blocks do not apply.
  const StepKernels bf16 = decompose_step(ds, b, DType::BF16, DType::BF16, {8, 1, 8, 1.0});
  const auto& Lb = bf16.per_layer;
  EXPECT_FALSE(std::any_of(Lb.begin(), Lb.end(), [](const Kernel& x) { return std::string(x.name) == "fp8_act_quant"; }));
}

}  // namespace
}  // namespace ks::kernels
