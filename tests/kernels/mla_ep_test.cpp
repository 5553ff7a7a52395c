// DeepSeek-V3 / Qwen3-MoE configs, MLA (latent KV cache, naive prefill, absorbed decode) and
// expert parallelism (all-to-all dispatch/combine, routing imbalance): expectations by hand from
// the public config.json values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/gpu_spec.hpp"
#include "kernels/hf_config.hpp"
#include "kernels/moe.hpp"
#include "kernels/spec_error.hpp"
#include "kernels/step_decomposer.hpp"
#include "tests/support/kernel_lookup.hpp"

namespace ks::kernels {
namespace {

const ModelConfig& model(const std::string& name) {
  const ModelConfig* m = find_builtin_model(name);
  if (m == nullptr) throw std::runtime_error("missing preset " + name);
  return *m;
}

const Kernel& find(const KernelList& ks, const std::string& name) {
  auto it = std::find_if(ks.begin(), ks.end(), [&](const Kernel& k) { return name == k.name; });
  if (it == ks.end()) throw std::runtime_error("no kernel " + name);
  return *it;
}
bool has(const KernelList& ks, const std::string& name) {
  return std::any_of(ks.begin(), ks.end(), [&](const Kernel& k) { return name == k.name; });
}

double rel(double a, double b) { return std::abs(a - b) / b; }

TEST(MoeConfigs, DeepSeekV3ParsesMlaSharedExpertsAndDenseLayers) {
  const ModelConfig& m = model("deepseek-v3");
  EXPECT_EQ(m.architecture, "DeepseekV3ForCausalLM");
  EXPECT_TRUE(m.is_mla());
  EXPECT_EQ(m.kv_lora_rank, 512);
  EXPECT_EQ(m.q_lora_rank, 1536);
  EXPECT_EQ(m.qk_rope_head_dim, 64);
  EXPECT_EQ(m.qk_nope_head_dim, 128);
  EXPECT_EQ(m.v_head_dim, 128);
  EXPECT_EQ(m.num_experts, 256);
  EXPECT_EQ(m.experts_per_token, 8);
  EXPECT_EQ(m.shared_experts, 1);
  EXPECT_EQ(m.expert_intermediate_size(), 2048);
  EXPECT_EQ(m.dense_layers, (std::vector<int>{0, 1, 2}));  // first_k_dense_replace = 3
  EXPECT_EQ(m.moe_layers(), 58);
  // One layer's MLA: q_a 7168x1536 + norm 1536 + q_b 1536x(128x192) + kv_a 7168x576 + norm 512
  // + kv_b 512x(128x256) + o 16384x7168 = 187,107,328.
  const std::int64_t attention = 7168LL * 1536 + 1536 + 1536LL * 128 * 192 + 7168LL * 576 + 512 +
                                 512LL * 128 * 256 + 128LL * 128 * 7168;
  EXPECT_EQ(attention, 187107328);
  EXPECT_EQ(m.layer_parameter_count(0), attention + 3 * 7168LL * 18432 + 2 * 7168);
  EXPECT_EQ(m.layer_parameter_count(3),
            attention + 257 * 3 * 7168LL * 2048 + 7168LL * 256 + 2 * 7168);  // 256 routed + 1 shared, router
}

// Published totals: DeepSeek-V3 671B / 37B activated (model card, without the MTP module),
// Qwen3-30B-A3B 30.5B / 3.3B, Qwen3-235B-A22B 235B / 22B (model cards). Tolerance: 0.5% on the
// total, 2% on the activated count (the cards round it to two or three digits: 37.55B -> "37B").
TEST(MoeConfigs, TotalAndActiveParametersMatchThePublishedCounts) {
  struct Case {
    const char* name;
    double total, active;
  };
  for (const Case& c : {Case{"deepseek-v3", 671e9, 37e9}, Case{"qwen3-30b-a3b", 30.5e9, 3.3e9},
                        Case{"qwen3-235b-a22b", 235e9, 22e9}}) {
    const ModelConfig& m = model(c.name);
    EXPECT_LT(rel(static_cast<double>(m.parameter_count()), c.total), 0.005) << c.name << " " << m.parameter_count();
    EXPECT_LT(rel(static_cast<double>(m.active_parameter_count()), c.active), 0.02)
        << c.name << " " << m.active_parameter_count();
  }
  // Dense models: every parameter is active.
  EXPECT_EQ(model("llama-3-8b").active_parameter_count(), model("llama-3-8b").parameter_count());
}

TEST(MoeConfigs, Qwen3MoeReadsHeadDimQkNormAndSparseLayers) {
  const ModelConfig& m = model("qwen3-30b-a3b");
  EXPECT_EQ(m.head_dim, 128);  // given: hidden 2048 / 32 heads would be 64
  EXPECT_TRUE(m.qk_norm);
  EXPECT_FALSE(m.is_mla());
  EXPECT_EQ(m.num_experts, 128);
  EXPECT_EQ(m.expert_intermediate_size(), 768);
  EXPECT_TRUE(m.dense_layers.empty());
  // A user's file: decoder_sparse_step 2 (layers 1, 3, 5 have experts) and mlp_only_layers [3].
  const std::string text = R"({"architectures": ["Qwen3MoeForCausalLM"], "num_hidden_layers": 6, "hidden_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512, "vocab_size": 1000,
    "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128, "decoder_sparse_step": 2,
    "mlp_only_layers": [3]})";
  const ModelConfig u = parse_hf_config(text, "mine.json", "mine");
  EXPECT_EQ(u.dense_layers, (std::vector<int>{0, 2, 3, 4}));
  EXPECT_EQ(u.moe_layers(), 2);
  // Per layer: attention 256x256 + 2x256x128 + 256x256 + qk norms 128, norms 512; dense MLP
  // 3x256x512; MoE 8 x 3x256x128 + router 256x8. Embedding and LM head 2 x 1000x256, final norm 256.
  const std::int64_t attn = 256 * 256 + 2 * 256 * 128 + 256 * 256 + 128 + 512;
  EXPECT_EQ(u.parameter_count(), 4 * (attn + 3 * 256 * 512) + 2 * (attn + 8 * 3 * 256 * 128 + 256 * 8) +
                                     2 * 1000 * 256 + 256);
  EXPECT_EQ(u.active_parameter_count(), 4 * (attn + 3 * 256 * 512) + 2 * (attn + 2 * 3 * 256 * 128 + 256 * 8) +
                                            2 * 1000 * 256 + 256);
}

TEST(MoeConfigs, BadMoeAndMlaKeysNameFileAndKey) {
  const std::string base = R"({"architectures": ["DeepseekV3ForCausalLM"], "num_hidden_layers": 4, "hidden_size": 256,
    "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000, "q_lora_rank": 64,
    "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32)";
  try {
    parse_hf_config(base + "}", "ds.json", "ds");
    FAIL() << "kv_lora_rank missing";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("ds.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kv_lora_rank"), std::string::npos) << e.what();
  }
  try {
    parse_hf_config(base + R"(, "kv_lora_rank": 128, "n_routed_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 64, "first_k_dense_replace": 4})", "ds.json", "ds");
    FAIL() << "no MoE layer left";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("first_k_dense_replace"), std::string::npos) << e.what();
  }
  try {
    parse_hf_config(R"({"architectures": ["Qwen3MoeForCausalLM"], "num_hidden_layers": 2, "hidden_size": 256,
      "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000, "num_experts": 8,
      "num_experts_per_tok": 2, "moe_intermediate_size": 64, "mlp_only_layers": [2]})", "q.json", "q");
    FAIL() << "layer index out of range";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("mlp_only_layers"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[0, 2)"), std::string::npos) << e.what();
  }
}

TEST(Mla, KvCacheHoldsTheLatentAndRopeKeyReplicatedOverTp) {
  const ModelConfig& ds = model("deepseek-v3");
  // (512 + 64) values x 2 bytes x 61 layers; MHA with 128 heads of 192 would be 2 x 128 x 192 x 2 x 61.
  EXPECT_DOUBLE_EQ(ds.kv_bytes_per_token(DType::BF16), 576.0 * 2 * 61);
  EXPECT_DOUBLE_EQ(ds.kv_bytes_per_token(DType::FP8), 576.0 * 61);
  EXPECT_EQ(ds.kv_cache_split(8), 1);
  // Qwen3-30B-A3B: GQA, 4 KV heads of 128, K and V, 48 layers, split over TP.
  const ModelConfig& q = model("qwen3-30b-a3b");
  EXPECT_DOUBLE_EQ(q.kv_bytes_per_token(DType::BF16), 2.0 * 4 * 128 * 2 * 48);
  EXPECT_EQ(q.kv_cache_split(4), 4);
}

TEST(Mla, OneLayersGemmShapesAtTp8) {
  const ModelConfig& ds = model("deepseek-v3");
  StepBatch b;
  b.prefills.push_back({100, 28, true});  // 100 new tokens after 28 cached: 128 keys
  b.decode_contexts = {1000, 500};
  const StepKernels k = decompose_step(ds, b, DType::BF16, DType::BF16, {8, 1});
  const auto& L = k.per_layer;
  const std::int64_t tokens = 102;
  auto shape = [&](const char* name, std::int64_t m, std::int64_t n, std::int64_t kk, std::int64_t batch) {
    const Kernel& g = find(L, name);
    EXPECT_EQ(g.op, OpKind::Gemm) << name;
    EXPECT_EQ(g.m, m) << name;
    EXPECT_EQ(g.n, n) << name;
    EXPECT_EQ(g.k, kk) << name;
    EXPECT_EQ(g.batch, batch) << name;
  };
  shape("qkv_a_proj", tokens, 1536 + 576, 7168, 1);  // q_a and kv_a fused, replicated
  shape("q_b_proj", tokens, 16 * 192, 1536, 1);      // 128 / 8 heads of nope 128 + rope 64
  shape("kv_b_proj", 128, 16 * (128 + 128), 512, 1);  // prefill keys up-projected to K_nope and V
  shape("q_absorb", 2, 512, 128, 16);                 // decode: per head, nope -> latent
  shape("v_up", 2, 128, 512, 16);                     // latent output -> v_head_dim
  shape("o_proj", tokens, 7168, 16 * 128, 1);
  // Shared expert split by TP (no EP): 2048 / 8.
  shape("shared_gate_up", tokens, 2 * 256, 7168, 1);
  shape("shared_down", tokens, 7168, 256, 1);
  EXPECT_EQ(find(L, "experts_gate_up").n, 2 * 2048 / 8);
  // Naive prefill attention: 16 heads, QK 192 + PV 128 per pair; pairs = 100 x 28 + 100 x 101 / 2.
  const Kernel& pre = find(L, "attention_prefill");
  const double pairs = 100.0 * 28 + 100.0 * 101 / 2;
  EXPECT_DOUBLE_EQ(pre.flops, 2.0 * 16 * (192 + 128) * pairs);
  // Q and O of 100 tokens, up-projected K and V of 128 keys (bf16), 100 latents of 576 written.
  EXPECT_DOUBLE_EQ(pre.bytes, 100.0 * 16 * 320 * 2 + 128.0 * 16 * 320 * 2 + 100.0 * 576 * 2);
  // Layers: 3 dense ones in `pre` after the embedding (and its all-reduce), 58 MoE ones repeated.
  EXPECT_EQ(k.num_layers, 58);
  EXPECT_EQ(std::string(k.pre.at(0).name), "embedding");
  EXPECT_EQ(std::string(k.pre.at(1).name), "embedding_all_reduce");
  EXPECT_EQ(std::count_if(k.pre.begin(), k.pre.end(), [](const Kernel& x) { return std::string(x.name) == "input_layernorm"; }), 3);
  EXPECT_EQ(std::count_if(k.pre.begin(), k.pre.end(), [](const Kernel& x) { return std::string(x.name) == "gate_up_proj"; }), 3);
  EXPECT_FALSE(has(L, "gate_up_proj"));
}

TEST(Mla, DecodeAttentionReadsOneSharedLatentPerKey) {
  const ModelConfig& ds = model("deepseek-v3");
  StepBatch b;
  b.decode_contexts = {1000};
  // tp = 1: 128 heads. Latents 1000 x 576 x 2 B, absorbed Q 128 x 576 x 2, output 128 x 512 x 2,
  // the new token's latent 576 x 2 written.
  const Kernel a1 = find(decompose_step(ds, b, DType::BF16, DType::BF16, {1, 1}).per_layer, "attention_decode");
  EXPECT_DOUBLE_EQ(a1.bytes, 1000.0 * 576 * 2 + 128.0 * 576 * 2 + 128.0 * 512 * 2 + 576.0 * 2);
  EXPECT_DOUBLE_EQ(a1.bytes, 1431680.0);
  EXPECT_DOUBLE_EQ(a1.flops, 2.0 * 128 * (576 + 512) * 1000);
  EXPECT_EQ(a1.heads, 128);
  // tp = 8: 16 heads, the same latent bytes (every rank reads the whole latent).
  const Kernel a8 = find(decompose_step(ds, b, DType::BF16, DType::BF16, {8, 1}).per_layer, "attention_decode");
  EXPECT_DOUBLE_EQ(a8.bytes, 1000.0 * 1152 + 16.0 * 1088 * 2 + 1152.0);
  // An fp8 cache halves the latent bytes only.
  const Kernel f8 = find(decompose_step(ds, b, DType::BF16, DType::FP8, {8, 1}).per_layer, "attention_decode");
  EXPECT_DOUBLE_EQ(f8.bytes, 1000.0 * 576 + 16.0 * 1088 * 2 + 576.0);
}

TEST(ExpertParallel, Ep8WithImbalance15PricesTheBusiestRank) {
  ModelConfig ds = model("deepseek-v3");
  ds.weight_block_size = 0;  // per-tensor fp8 scales (the block scales: fp8_block_test.cpp)
  StepBatch b;
  b.decode_contexts.assign(64, 100);  // 64 tokens
  ParallelConfig par{8, 1, 8, 1.5};
  const StepKernels k = decompose_step(ds, b, DType::FP8, DType::BF16, par);
  const auto& L = k.per_layer;
  // Each rank routes 64 / 8 = 8 tokens (64 rows); the busiest receives 1.5 x 64 x 8 / 8 = 96 rows.
  EXPECT_EQ(find(L, "router").m, 8);
  const Kernel& up = find(L, "experts_gate_up");
  EXPECT_EQ(up.op, OpKind::MoeGemm);
  EXPECT_EQ(up.m, 96);
  EXPECT_EQ(up.n, 2 * 2048);  // whole experts, not split by TP
  EXPECT_EQ(up.k, 7168);
  EXPECT_EQ(find(L, "experts_down").m, 96);
  // Its 32 experts touched: 32 x (1 - (1 - 8/256)^64) = 27.8 -> 28.
  EXPECT_EQ(up.groups, 28);
  EXPECT_DOUBLE_EQ(up.bytes, (96.0 * 7168 + 96.0 * 4096) * 2 + 32.0 * (1 - std::pow(1 - 8.0 / 256, 64)) * 4096 * 7168);
  // Dispatch and combine: the busiest rank's 96 rows of 7168 bf16 values.
  for (const char* name : {"moe_dispatch", "moe_combine"}) {
    const Kernel& a2a = find(L, name);
    EXPECT_EQ(a2a.op, OpKind::AllToAll);
    EXPECT_TRUE(is_collective(a2a.op));
    EXPECT_DOUBLE_EQ(a2a.bytes, 96.0 * 7168 * 2);
  }
  // Shared expert whole over the rank's 8 tokens; the slices are all-gathered, not all-reduced.
  EXPECT_EQ(find(L, "shared_gate_up").m, 8);
  EXPECT_EQ(find(L, "shared_gate_up").n, 2 * 2048);
  EXPECT_EQ(find(L, "moe_sum").m, 8);
  EXPECT_TRUE(has(L, "moe_all_gather"));
  EXPECT_FALSE(has(L, "mlp_all_reduce"));
  EXPECT_TRUE(has(L, "attn_all_reduce"));
  // The three dense layers keep their TP-split MLP and all-reduce.
  EXPECT_EQ(find(k.pre, "gate_up_proj").n, 2 * 18432 / 8);
  EXPECT_TRUE(has(k.pre, "mlp_all_reduce"));
  // Uniform routing: 64 rows on each rank.
  par.moe_imbalance = 1.0;
  EXPECT_EQ(find(decompose_step(ds, b, DType::FP8, DType::BF16, par).per_layer, "experts_gate_up").m, 64);
}

TEST(ExpertParallel, BadParallelConfigsAreRefused) {
  const ModelConfig& ds = model("deepseek-v3");
  StepBatch b;
  b.decode_contexts = {10};
  EXPECT_THROW(decompose_step(ds, b, DType::BF16, DType::BF16, {8, 1, 4, 1.0}), std::invalid_argument);  // ep != tp
  EXPECT_THROW(decompose_step(ds, b, DType::BF16, DType::BF16, {8, 1, 8, 9.0}), std::invalid_argument);  // > ep
  EXPECT_THROW(decompose_step(ds, b, DType::BF16, DType::BF16, {8, 1, 8, 0.5}), std::invalid_argument);  // < 1
  EXPECT_THROW(decompose_step(model("llama-3-8b"), b, DType::BF16, DType::BF16, {2, 1, 2, 1.0}),
               std::invalid_argument);  // dense model
  try {
    decompose_step(ds, b, DType::BF16, DType::BF16, {8, 1, 4, 1.0});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("must equal tp"), std::string::npos) << e.what();
  }
}

TEST(ExpertParallel, StepDecomposerRebuildsModelsWithDenseLayers) {
  // The reuse path refills attention in per_layer only; the dense layers' attention in `pre` must
  // follow the contexts too.
  const ModelConfig& ds = model("deepseek-v3");
  StepDecomposer dec(ds, DType::FP8, DType::BF16, {8, 1, 8, 1.0});
  StepBatch b;
  b.decode_contexts = {100, 200};
  const StepKernels before = dec.decompose(b);
  const double first = find(before.pre, "attention_decode").bytes;
  b.decode_contexts = {1100, 1200};
  const StepKernels& k = dec.decompose(b);
  EXPECT_DOUBLE_EQ(find(k.pre, "attention_decode").bytes - first, 2000.0 * 576 * 2);
  EXPECT_EQ(test_support::kernels_in_new_chunks(before.pre, k.pre).size(), k.pre.size());  // rebuilt
}

TEST(ExpertParallel, PipelineStagesCarryTheirOwnDenseLayers) {
  // 61 layers over 2 stages: 31 + 30 (vLLM gives the extra layer to the stage before the last).
  // Stage 0 holds dense layers 0-2 and 28 MoE layers; stage 1 holds 30 MoE layers.
  const ModelConfig& ds = model("deepseek-v3");
  StepBatch b;
  b.decode_contexts = {64, 64};
  std::vector<StepKernels> st;
  decompose_stages(ds, b, DType::FP8, DType::BF16, {4, 2}, st);
  ASSERT_EQ(st.size(), 2u);
  auto count = [](const KernelList& ks, const char* name) {
    return std::count_if(ks.begin(), ks.end(), [&](const Kernel& k) { return std::string(k.name) == name; });
  };
  EXPECT_EQ(st[0].num_layers, 28);
  EXPECT_EQ(count(st[0].pre, "input_layernorm"), 3);
  EXPECT_EQ(st[1].num_layers, 30);
  EXPECT_EQ(count(st[1].pre, "input_layernorm"), 0);
  EXPECT_EQ(count(st[1].pre, "pp_recv_all_gather"), 1);
  // Weights: stage 0 = embedding + layers 0-30, stage 1 = layers 31-60 + final norm + LM head.
  EXPECT_EQ(ds.stage_parameter_count(31, true, false) + ds.stage_parameter_count(30, false, true), ds.parameter_count());
}

TEST(Mla, DecodeStepsReuseTheirKernelsWithTheLatentAttention) {
  // A dense MLA model (n_routed_experts absent): decode steps of the same size refill attention
  // only, and the refill equals a fresh decomposition.
  const ModelConfig m = parse_hf_config(R"({"architectures": ["DeepseekV2ForCausalLM"], "num_hidden_layers": 2,
    "hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000, "kv_lora_rank": 64,
    "q_lora_rank": null, "qk_rope_head_dim": 16, "qk_nope_head_dim": 32, "v_head_dim": 32})", "lite.json", "lite");
  EXPECT_EQ(m.q_lora_rank, 0);
  EXPECT_TRUE(m.dense_layers.empty());
  StepDecomposer dec(m, DType::BF16, DType::BF16, {2, 1});
  StepBatch b;
  b.decode_contexts = {10, 20};
  const StepKernels before = dec.decompose(b);
  b.decode_contexts = {30, 50};
  const StepKernels& k = dec.decompose(b);
  EXPECT_EQ(test_support::kernels_in_new_chunks(before.per_layer, k.per_layer),
            (std::vector<std::string>{"attention_decode"}));
  const Kernel fresh = find(decompose_step(m, b, DType::BF16, DType::BF16, {2, 1}).per_layer, "attention_decode");
  EXPECT_DOUBLE_EQ(find(k.per_layer, "attention_decode").bytes, fresh.bytes);
  // 2 heads per rank: latents (64 + 16) x 2 B for 80 keys, Q 2 x 80 and O 2 x 64 per query, 2 new latents.
  EXPECT_DOUBLE_EQ(fresh.bytes, 80.0 * 80 * 2 + 2.0 * 2 * (80 + 64) * 2 + 2.0 * 80 * 2);
  // No q LoRA: q_proj [T x 256] . [256 x 2 x 48], kv_a_proj [T x 256] . [256 x 80].
  EXPECT_EQ(find(k.per_layer, "q_proj").n, 2 * 48);
  EXPECT_EQ(find(k.per_layer, "kv_a_proj").n, 80);
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(DType::BF16), 2.0 * 80 * 2);
}

TEST(Fp4, NvFp4WeightsOnGpusWithFp4TensorCores) {
  EXPECT_EQ(parse_dtype("fp4"), DType::FP4);
  EXPECT_EQ(parse_dtype("NVFP4"), DType::FP4);
  EXPECT_EQ(dtype_name(DType::FP4), "fp4");
  EXPECT_DOUBLE_EQ(dtype_bytes(DType::FP4), 0.5625);  // 4 bits + an 8-bit scale per 16 values
  // B200 (Blackwell): 4 x 2250 dense bf16 TFLOPS = 9 PFLOPS; MI355X (CDNA4): 4 x 2516.6. Hopper: none.
  EXPECT_DOUBLE_EQ(find_builtin_gpu("b200")->peak(DType::FP4), 9000e12);
  EXPECT_DOUBLE_EQ(find_builtin_gpu("mi355x")->peak(DType::FP4), 4 * 2516.6e12);
  EXPECT_FALSE(find_builtin_gpu("h200")->supports(DType::FP4));
  EXPECT_FALSE(find_builtin_gpu("a100_sxm_80gb")->supports(DType::FP4));
  EXPECT_THROW(find_builtin_gpu("h200")->peak(DType::FP4), std::invalid_argument);
  // W4A4 GEMMs: fp4 compute, 16-bit activations, 0.5625 B per weight. Llama-3-8B qkv_proj of 4
  // tokens: [4 x 4096] . [4096 x 6144].
  StepBatch b;
  b.decode_contexts = {10, 10, 10, 10};
  const Kernel q = find(decompose_step(model("llama-3-8b"), b, DType::FP4, DType::BF16).per_layer, "qkv_proj");
  EXPECT_EQ(q.dtype, DType::FP4);
  EXPECT_DOUBLE_EQ(q.bytes, (4.0 * 4096 + 4.0 * 6144) * 2 + 4096.0 * 6144 * 0.5625);
  EXPECT_DOUBLE_EQ(model("deepseek-v3").weight_bytes(DType::FP4), 671026404352.0 * 0.5625);
}

}  // namespace
}  // namespace ks::kernels
