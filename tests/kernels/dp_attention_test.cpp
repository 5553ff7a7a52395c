// Attention data parallelism (parallel.dp_attention) with expert-parallel MoE: the busiest DP
// rank's share of a step, its unsharded attention / dense / shared kernels, the MoE's all-to-alls,
// and the memory plan (replicated weights, per-rank KV). Expectations by hand from the public
// config.json values of DeepSeek-V3 and Qwen3-30B-A3B.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/step_decomposer.hpp"
#include "tests/support/kernel_lookup.hpp"

namespace ks::kernels {
namespace {

using test_support::has_kernel;
using test_support::kernel_named;

const ModelConfig& model(const std::string& name) {
  const ModelConfig* m = find_builtin_model(name);
  if (m == nullptr) throw std::runtime_error("missing preset " + name);
  return *m;
}
bool any_collective(const KernelList& ks, OpKind op) {
  return std::any_of(ks.begin(), ks.end(), [&](const Kernel& k) { return k.op == op; });
}

ParallelConfig dp8(double imbalance = 1.0) { return ParallelConfig{8, 1, 8, imbalance, true}; }

TEST(DpAttention, SequencesAreDealtWholeAndTheBusiestRankIsPriced) {
  StepBatch b, out;
  // 67 decodes over 8 ranks: 3 ranks get 9, the busiest has ceil(67 / 8) = 9.
  b.decode_contexts.assign(67, 100);
  dp_rank_batch(b, nullptr, 8, out);
  EXPECT_EQ(out.decode_contexts.size(), 9u);
  EXPECT_TRUE(out.prefills.empty());
  // A 1000-token prefill chunk stays whole on one rank; the 63 decodes fill the other 7 (9 each).
  b.decode_contexts.assign(63, 100);
  b.prefills = {PrefillChunk{1000, 0, true}};
  dp_rank_batch(b, nullptr, 8, out);
  ASSERT_EQ(out.prefills.size(), 1u);
  EXPECT_EQ(out.prefills[0].tokens, 1000);
  EXPECT_TRUE(out.decode_contexts.empty());
  // Chunks 600, 500, 400 and 16 decodes over 2 ranks: 600 -> r0, 500 -> r1, 400 -> r1 (900),
  // decodes to r0 until 616... all 16 (r0 = 616 < 900): busiest r1 with the 500 and the 400.
  b.prefills = {PrefillChunk{500, 0, true}, PrefillChunk{600, 0, true}, PrefillChunk{400, 0, true}};
  b.decode_contexts.assign(16, 50);
  dp_rank_batch(b, nullptr, 2, out);
  ASSERT_EQ(out.prefills.size(), 2u);
  EXPECT_EQ(out.prefills[0].tokens, 500);  // batch order kept
  EXPECT_EQ(out.prefills[1].tokens, 400);
  EXPECT_TRUE(out.decode_contexts.empty());
  // Equal tokens: the rank reading more keys is the busiest (decodes 1000, 10, 1000, 10 over 2).
  b.prefills.clear();
  b.decode_contexts = {1000, 10, 1000, 10};
  dp_rank_batch(b, nullptr, 2, out);
  EXPECT_EQ(out.decode_contexts, (std::vector<std::int64_t>{1000, 1000}));
  EXPECT_THROW(dp_rank_batch(b, nullptr, 0, out), std::invalid_argument);
}

// DeepSeek-V3, 64 decodes of 1000 keys, DP8 + EP8: each rank runs 8 decodes through all 128
// heads; no attention all-reduce; the busiest expert rank receives 1.2 x 64 x 8 / 8 = 76.8 -> 77 rows.
TEST(DpAttention, DeepSeekV3Dp8DecodeKernels) {
  const ModelConfig& ds = model("deepseek-v3");
  StepBatch b;
  b.decode_contexts.assign(64, 1000);
  const StepKernels k = decompose_step(ds, b, DType::FP8, DType::BF16, dp8(1.2));
  const auto& L = k.per_layer;
  // MLA projections unsharded over the rank's 8 tokens.
  EXPECT_EQ(kernel_named(L, "qkv_a_proj").m, 8);
  EXPECT_EQ(kernel_named(L, "qkv_a_proj").n, 1536 + 576);
  EXPECT_EQ(kernel_named(L, "q_b_proj").n, 128 * 192);  // TP8: 16 x 192
  EXPECT_EQ(kernel_named(L, "q_b_proj").k, 1536);
  EXPECT_EQ(kernel_named(L, "o_proj").m, 8);
  EXPECT_EQ(kernel_named(L, "o_proj").k, 128 * 128);
  EXPECT_EQ(kernel_named(L, "q_absorb").batch, 128);
  // Absorbed decode over the rank's 8 sequences' latents, 128 heads (bf16 latent of 576).
  const Kernel& a = kernel_named(L, "attention_decode");
  EXPECT_EQ(a.heads, 128);
  EXPECT_EQ(a.m, 8);
  EXPECT_EQ(a.n, 8000);
  EXPECT_DOUBLE_EQ(a.bytes, 8000.0 * 576 * 2 + 8.0 * 128 * 1088 * 2 + 8.0 * 576 * 2);
  EXPECT_DOUBLE_EQ(a.flops, 2.0 * 128 * 1088 * 8000);
  // No TP collective anywhere; the MoE's all-to-alls are the only communication.
  for (const auto* list : {&k.pre, &k.per_layer, &k.post}) {
    EXPECT_FALSE(any_collective(*list, OpKind::AllReduce));
    EXPECT_FALSE(any_collective(*list, OpKind::AllGather));
  }
  EXPECT_EQ(kernel_named(L, "router").m, 8);
  EXPECT_EQ(kernel_named(L, "experts_gate_up").m, 77);
  EXPECT_EQ(kernel_named(L, "experts_gate_up").n, 2 * 2048);
  EXPECT_EQ(kernel_named(L, "experts_down").m, 77);
  for (const char* name : {"moe_dispatch", "moe_combine"}) {
    EXPECT_EQ(kernel_named(L, name).op, OpKind::AllToAll);
    EXPECT_DOUBLE_EQ(kernel_named(L, name).bytes, 77.0 * 7168 * 2);
  }
  EXPECT_EQ(kernel_named(L, "shared_gate_up").m, 8);
  EXPECT_EQ(kernel_named(L, "shared_gate_up").n, 2 * 2048);
  EXPECT_EQ(kernel_named(L, "moe_sum").m, 8);
  // Dense layers (first_k_dense_replace = 3) whole: 3 x gate_up of 2 x 18432, no all-reduce.
  EXPECT_EQ(std::count_if(k.pre.begin(), k.pre.end(), [](const Kernel& x) { return std::string(x.name) == "gate_up_proj"; }), 3);
  EXPECT_EQ(kernel_named(k.pre, "gate_up_proj").n, 2 * 18432);
  EXPECT_EQ(kernel_named(k.pre, "gate_up_proj").m, 8);
  EXPECT_EQ(k.num_layers, 58);
  // Embedding, LM head (whole vocabulary) and sampler over the rank's 8 rows.
  EXPECT_EQ(kernel_named(k.pre, "embedding").m, 8);
  EXPECT_EQ(kernel_named(k.post, "lm_head").m, 8);
  EXPECT_EQ(kernel_named(k.post, "lm_head").n, 129280);
  EXPECT_EQ(kernel_named(k.post, "sampler").m, 8);
  // The same step under TP8 + EP8 for contrast: 16 heads per rank, all-reduce and all-gather.
  const StepKernels tp = decompose_step(ds, b, DType::FP8, DType::BF16, {8, 1, 8, 1.2});
  EXPECT_EQ(kernel_named(tp.per_layer, "q_b_proj").n, 16 * 192);
  EXPECT_TRUE(has_kernel(tp.per_layer, "attn_all_reduce"));
  EXPECT_TRUE(has_kernel(tp.per_layer, "moe_all_gather"));
  EXPECT_EQ(kernel_named(tp.per_layer, "experts_gate_up").m, 77);  // the experts' rows are the same
}

// A prefill lands whole on one rank: its 2048 tokens run every unsharded kernel there, and the
// experts' rows count the replica's 2048 + 7 tokens.
TEST(DpAttention, Qwen3MoePrefillRunsWholeOnOneRank) {
  const ModelConfig& q = model("qwen3-30b-a3b");
  StepBatch b;
  b.prefills = {PrefillChunk{2048, 0, true}};
  b.decode_contexts.assign(7, 500);
  const StepKernels k = decompose_step(q, b, DType::BF16, DType::BF16, dp8());
  const auto& L = k.per_layer;
  // 32 query + 2 x 4 KV heads of 128, hidden 2048 (TP8: 4 + 2 x 1 heads).
  EXPECT_EQ(kernel_named(L, "qkv_proj").m, 2048);
  EXPECT_EQ(kernel_named(L, "qkv_proj").n, (32 + 8) * 128);
  EXPECT_EQ(kernel_named(L, "qkv_proj").k, 2048);
  EXPECT_EQ(kernel_named(L, "o_proj").k, 32 * 128);
  EXPECT_FALSE(has_kernel(L, "attention_decode"));  // the decodes sit on the other ranks
  EXPECT_EQ(kernel_named(L, "attention_prefill").heads, 32);
  EXPECT_FALSE(has_kernel(L, "attn_all_reduce"));
  // 128 experts top-8, 16 per rank: rows ceil(2055 x 8 / 8) = 2055, width 768 whole.
  EXPECT_EQ(kernel_named(L, "router").m, 2048);
  EXPECT_EQ(kernel_named(L, "experts_gate_up").m, 2055);
  EXPECT_EQ(kernel_named(L, "experts_gate_up").n, 2 * 768);
  EXPECT_DOUBLE_EQ(kernel_named(L, "moe_dispatch").bytes, 2055.0 * 2048 * 2);
  EXPECT_FALSE(has_kernel(L, "moe_all_gather"));
  EXPECT_EQ(kernel_named(k.post, "lm_head").m, 1);  // the prompt's first token
}

// Speculative verification: a decode weighs its queries when dealt.
TEST(DpAttention, DecodeQueriesTravelWithTheirDecodes) {
  StepBatch b, out;
  b.decode_contexts = {100, 200, 300};
  const std::vector<std::int64_t> q{5, 1, 1};
  std::vector<std::int64_t> rq;
  dp_rank_batch(b, &q, 2, out, &rq);
  EXPECT_EQ(out.decode_contexts, (std::vector<std::int64_t>{100}));  // 5 tokens vs 1 + 1
  EXPECT_EQ(rq, (std::vector<std::int64_t>{5}));
}

TEST(DpAttention, BadConfigsNameTheKey) {
  StepBatch b;
  b.decode_contexts = {10};
  auto message = [&](const ModelConfig& m, ParallelConfig p) {
    try {
      decompose_step(m, b, DType::BF16, DType::BF16, p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const ModelConfig& ds = model("deepseek-v3");
  EXPECT_NE(message(model("llama-3-8b"), {8, 1, 1, 1.0, true}).find("dp_attention needs a mixture-of-experts"),
            std::string::npos);
  EXPECT_NE(message(ds, {1, 1, 1, 1.0, true}).find("dp_attention needs tp > 1"), std::string::npos);
  EXPECT_NE(message(ds, {8, 1, 1, 1.0, true}).find("dp_attention needs ep = tp"), std::string::npos);
  EXPECT_NE(message(ds, {4, 2, 4, 1.0, true}).find("dp_attention with pipeline parallelism"), std::string::npos);
  EXPECT_NE(message(ds, {8, 1, 8, 9.0, true}).find("imbalance"), std::string::npos);
  // Heads need not divide the ranks: attention is whole on each (Qwen3-30B-A3B's 4 KV heads, 6 ranks).
  EXPECT_EQ(message(model("qwen3-30b-a3b"), {6, 1, 6, 1.0, true}), "no error");
}

// The StepDecomposer (the replica's path) gives what decompose_step gives, step after step.
TEST(DpAttention, StepDecomposerMatchesDecomposeStep) {
  const ModelConfig& q = model("qwen3-30b-a3b");
  StepDecomposer dec(q, DType::BF16, DType::BF16, dp8());
  for (int n : {16, 16, 17}) {
    StepBatch b;
    for (int i = 0; i < n; ++i) b.decode_contexts.push_back(100 + 10 * i);
    const StepKernels& got = dec.decompose(b);
    const StepKernels want = decompose_step(q, b, DType::BF16, DType::BF16, dp8());
    ASSERT_EQ(got.per_layer.size(), want.per_layer.size());
    for (std::size_t i = 0; i < want.per_layer.size(); ++i) {
      EXPECT_EQ(got.per_layer[i].m, want.per_layer[i].m);
      EXPECT_DOUBLE_EQ(got.per_layer[i].bytes, want.per_layer[i].bytes);
    }
  }
}

}  // namespace
}  // namespace ks::kernels

