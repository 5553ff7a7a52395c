#include "kernels/step_decomposer.hpp"
#include "tests/support/kernel_lookup.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ks::kernels {
namespace {

const ModelConfig& llama2_7b() { return *find_builtin_model("llama-2-7b"); }
const ModelConfig& llama2_70b() { return *find_builtin_model("llama-2-70b"); }

std::vector<std::string> names(const KernelList& list) { return ks::test_support::kernel_names(list); }
const Kernel& find(const KernelList& list, const std::string& name) {
  return ks::test_support::kernel_named(list, name);
}

int count(const KernelList& kernels, OpKind op) {
  int n = 0;
  for (const Kernel& k : kernels) n += k.op == op ? 1 : 0;
  return n;
}

StepBatch mixed_batch() {
  StepBatch b;
  b.prefills = {{3, 2}, {4, 0}};
  b.decode_contexts = {10, 20};
  return b;
}

TEST(StepBatch, TokenCounts) {
  StepBatch b = mixed_batch();
  EXPECT_EQ(b.num_tokens(), 3 + 4 + 2);
  EXPECT_EQ(b.sampled_tokens(), 2 + 2);
  b.prefills[0].last_chunk = false;
  EXPECT_EQ(b.sampled_tokens(), 3);
}

TEST(StepDecomposer, KernelOrderSingleGpu) {
  const StepKernels s = decompose_step(llama2_7b(), mixed_batch(), DType::BF16, DType::BF16);
  EXPECT_EQ(names(s.pre), (std::vector<std::string>{"embedding"}));
  EXPECT_EQ(names(s.per_layer),
            (std::vector<std::string>{
                "input_layernorm", "qkv_proj", "rotary_emb", "attention_prefill",
                "attention_decode", "o_proj", "attn_residual_add", "post_attention_layernorm",
                "gate_up_proj", "silu_mul", "down_proj", "mlp_residual_add"}));
  EXPECT_EQ(names(s.post), (std::vector<std::string>{"final_layernorm", "lm_head", "sampler"}));
  EXPECT_EQ(s.num_layers, 32);
  EXPECT_EQ(count(s.per_layer, OpKind::AllReduce), 0);
}

TEST(StepDecomposer, KernelOrderWithTensorParallel) {
  StepBatch b;
  b.decode_contexts = {100};
  const StepKernels s = decompose_step(llama2_7b(), b, DType::BF16, DType::BF16, {2, 1});
  EXPECT_EQ(names(s.pre), (std::vector<std::string>{"embedding", "embedding_all_reduce"}));
  EXPECT_EQ(names(s.per_layer),
            (std::vector<std::string>{
                "input_layernorm", "qkv_proj", "rotary_emb", "attention_decode", "o_proj",
                "attn_all_reduce", "attn_residual_add", "post_attention_layernorm", "gate_up_proj",
                "silu_mul", "down_proj", "mlp_all_reduce", "mlp_residual_add"}));
  EXPECT_EQ(names(s.post), (std::vector<std::string>{"final_layernorm", "lm_head",
                                                     "logits_all_gather", "sampler"}));
  for (const Kernel& k : s.per_layer) EXPECT_EQ(k.phase, Phase::Decode) << k.name;
}

TEST(StepDecomposer, GemmFlopsAndBytesByHand) {
  StepBatch b;
  b.prefills = {{100, 0}};
  const StepKernels s = decompose_step(llama2_7b(), b, DType::BF16, DType::BF16);
  const Kernel& qkv = find(s.per_layer, "qkv_proj");
  // Llama-2-7B: 32 heads + 2 x 32 KV heads, head_dim 128 -> N = 12288, K = 4096.
  EXPECT_EQ(qkv.op, OpKind::Gemm);
  EXPECT_EQ(qkv.m, 100);
  EXPECT_EQ(qkv.n, 12288);
  EXPECT_EQ(qkv.k, 4096);
  EXPECT_DOUBLE_EQ(qkv.flops, 2.0 * 100 * 12288 * 4096);  // 10.07 GFLOP
  // bf16: input 100x4096, output 100x12288, weights 4096x12288, 2 bytes each.
  EXPECT_DOUBLE_EQ(qkv.bytes, 2.0 * (100.0 * 4096 + 100.0 * 12288 + 4096.0 * 12288));

  const Kernel& down = find(s.per_layer, "down_proj");
  EXPECT_EQ(down.n, 4096);
  EXPECT_EQ(down.k, 11008);
  EXPECT_EQ(find(s.per_layer, "gate_up_proj").n, 2 * 11008);
}

TEST(StepDecomposer, PrefillAttentionFlopsByHand) {
  StepBatch b;
  b.prefills = {{3, 2}, {4, 0}};
  const StepKernels s = decompose_step(llama2_7b(), b, DType::BF16, DType::BF16);
  // Causal pairs, counted position by position: query at absolute position p sees p + 1 keys.
  long pairs = 0;
  for (int p = 2; p < 5; ++p) pairs += p + 1;  // chunk 1: positions 2, 3, 4 -> 3 + 4 + 5
  for (int p = 0; p < 4; ++p) pairs += p + 1;  // chunk 2: positions 0..3 -> 1 + 2 + 3 + 4
  ASSERT_EQ(pairs, 22);
  const Kernel& attn = find(s.per_layer, "attention_prefill");
  // QK^T and PV: 2 x 2 x head_dim FLOPs per pair per head; 32 heads x 128.
  EXPECT_DOUBLE_EQ(attn.flops, 4.0 * 32 * 128 * pairs);
  EXPECT_EQ(attn.m, 7);
  EXPECT_EQ(attn.n, 9);  // keys read: (2 + 3) + (0 + 4)
  EXPECT_EQ(attn.phase, Phase::Prefill);
  const double row = 32.0 * 128 * 2;  // one token's K (or V, or Q, or O) in bf16
  EXPECT_DOUBLE_EQ(attn.bytes, 7 * row /* Q */ + 7 * row /* O */ + 9 * 2 * row /* K,V read */ +
                                   7 * 2 * row /* K,V write */);
  // No decode in the batch: no decode attention kernel.
  EXPECT_EQ(count(s.per_layer, OpKind::AttentionDecode), 0);
}

// Sliding window of 4: a query scores itself and the 3 keys before it, no more.
TEST(StepDecomposer, SlidingWindowBoundsAttention) {
  ModelConfig m = llama2_7b();
  m.sliding_window = 4;
  StepBatch b;
  b.prefills = {{6, 0}, {2, 10}};
  b.decode_contexts = {3, 10};
  const StepKernels s = decompose_step(m, b, DType::BF16, DType::BF16);
  // Chunk 1, positions 1..6: 1 + 2 + 3 + 4 + 4 + 4 = 18 pairs over keys 1..6.
  // Chunk 2, positions 11, 12: 4 + 4 = 8 pairs over keys 8..12 (5 keys).
  const Kernel& prefill = find(s.per_layer, "attention_prefill");
  EXPECT_DOUBLE_EQ(prefill.flops, 4.0 * 32 * 128 * (18 + 8));
  EXPECT_EQ(prefill.n, 6 + 5);
  // Decode: contexts 3 and 10 read 3 and 4 keys.
  const Kernel& decode = find(s.per_layer, "attention_decode");
  EXPECT_EQ(decode.n, 3 + 4);
  EXPECT_DOUBLE_EQ(decode.flops, 4.0 * 32 * 128 * 7);

  // Within the window nothing changes; Mistral's 4096 caps a 10000-token context.
  m.sliding_window = 64;
  const StepKernels full = decompose_step(llama2_7b(), b, DType::BF16, DType::BF16);
  const StepKernels wide = decompose_step(m, b, DType::BF16, DType::BF16);
  EXPECT_DOUBLE_EQ(find(wide.per_layer, "attention_prefill").flops, find(full.per_layer, "attention_prefill").flops);
  EXPECT_DOUBLE_EQ(find(wide.per_layer, "attention_decode").bytes, find(full.per_layer, "attention_decode").bytes);
  StepBatch long_decode, at_window;
  long_decode.decode_contexts = {10000};
  at_window.decode_contexts = {4096};
  const ModelConfig& mistral = *find_builtin_model("mistral-7b");
  EXPECT_DOUBLE_EQ(find(decompose_step(mistral, long_decode, DType::BF16, DType::BF16).per_layer, "attention_decode").bytes,
                   find(decompose_step(mistral, at_window, DType::BF16, DType::BF16).per_layer, "attention_decode").bytes);
}

TEST(StepDecomposer, DecodeAttentionBytesDominatedByKvCache) {
  StepBatch b;
  b.decode_contexts = {1000, 3000};
  const ModelConfig& m = *find_builtin_model("llama-3-8b");
  const StepKernels s = decompose_step(m, b, DType::BF16, DType::FP8);
  const Kernel& attn = find(s.per_layer, "attention_decode");
  // KV cache: 4000 tokens x (K + V) x 8 KV heads x 128 x 1 byte (fp8) = 8,192,000 B.
  const double kv_read = 4000.0 * 2 * 8 * 128 * 1;
  const double q_and_o = 2.0 * 2 * 32 * 128 * 2;  // 2 sequences, bf16 Q in and O out
  const double kv_write = 2.0 * 2 * 8 * 128 * 1;  // new token's K and V, 2 sequences
  EXPECT_DOUBLE_EQ(attn.bytes, kv_read + q_and_o + kv_write);
  EXPECT_GT(kv_read / attn.bytes, 0.99);
  EXPECT_DOUBLE_EQ(attn.flops, 4.0 * 32 * 128 * 4000);
  EXPECT_EQ(attn.m, 2);
  EXPECT_EQ(attn.n, 4000);
}

TEST(StepDecomposer, TensorParallelHalvesGemmsAndAddsAllReduces) {
  StepBatch b;
  b.prefills = {{256, 0}};
  const StepKernels tp1 = decompose_step(llama2_7b(), b, DType::BF16, DType::BF16, {1, 1});
  const StepKernels tp2 = decompose_step(llama2_7b(), b, DType::BF16, DType::BF16, {2, 1});
  for (const char* col : {"qkv_proj", "gate_up_proj"}) {
    EXPECT_EQ(find(tp2.per_layer, col).n * 2, find(tp1.per_layer, col).n) << col;
    EXPECT_EQ(find(tp2.per_layer, col).k, find(tp1.per_layer, col).k) << col;
  }
  for (const char* row : {"o_proj", "down_proj"}) {
    EXPECT_EQ(find(tp2.per_layer, row).k * 2, find(tp1.per_layer, row).k) << row;
    EXPECT_EQ(find(tp2.per_layer, row).n, find(tp1.per_layer, row).n) << row;
  }
  EXPECT_DOUBLE_EQ(find(tp2.per_layer, "attention_prefill").flops * 2,
                   find(tp1.per_layer, "attention_prefill").flops);
  EXPECT_EQ(count(tp2.per_layer, OpKind::AllReduce), 2);
  const Kernel& ar = find(tp2.per_layer, "attn_all_reduce");
  EXPECT_DOUBLE_EQ(ar.bytes, 256.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(ar.flops, 0.0);
  EXPECT_EQ(find(tp2.post, "lm_head").n, 16000);
}

TEST(StepDecomposer, KvHeadsReplicatedBeyondTheirCount) {
  StepBatch b;
  b.decode_contexts = {64};
  // Llama-2-70B: 64 query heads, 8 KV heads; tp=16 -> 4 query heads and 1 (replicated) KV head.
  const StepKernels s = decompose_step(llama2_70b(), b, DType::BF16, DType::BF16, {16, 1});
  EXPECT_EQ(find(s.per_layer, "qkv_proj").n, (4 + 2 * 1) * 128);
  EXPECT_THROW(decompose_step(llama2_70b(), b, DType::BF16, DType::BF16, {3, 1}),
               std::invalid_argument);
}

TEST(StepDecomposer, LmHeadOnlyOverSampledTokens) {
  StepBatch b;
  b.prefills = {{512, 0, /*last_chunk=*/false}, {100, 412, true}};
  b.decode_contexts = {7, 8, 9};
  const StepKernels s = decompose_step(llama2_7b(), b, DType::BF16, DType::BF16);
  EXPECT_EQ(find(s.post, "final_layernorm").m, 512 + 100 + 3);
  const Kernel& lm = find(s.post, "lm_head");
  EXPECT_EQ(lm.m, 4);
  EXPECT_DOUBLE_EQ(lm.flops, 2.0 * 4 * 32000 * 4096);
  EXPECT_EQ(find(s.post, "sampler").m, 4);

  StepBatch mid_prompt;
  mid_prompt.prefills = {{512, 0, false}};
  const StepKernels none = decompose_step(llama2_7b(), mid_prompt, DType::BF16, DType::BF16);
  EXPECT_EQ(names(none.post), (std::vector<std::string>{"final_layernorm"}));
}

TEST(StepDecomposer, EmbeddingAndElementwiseTraffic) {
  StepBatch b;
  b.prefills = {{10, 0}};
  const StepKernels s = decompose_step(llama2_7b(), b, DType::BF16, DType::BF16);
  EXPECT_DOUBLE_EQ(s.pre[0].bytes, 10.0 * 4096 * 2 * 2);  // gather: read + write
  EXPECT_DOUBLE_EQ(find(s.per_layer, "attn_residual_add").bytes, 3.0 * 10 * 4096 * 2);
  EXPECT_DOUBLE_EQ(find(s.per_layer, "silu_mul").bytes, 3.0 * 10 * 11008 * 2);
}

TEST(StepDecomposer, QuantisedWeights) {
  StepBatch b;
  b.decode_contexts = {128};
  const StepKernels int4 = decompose_step(llama2_7b(), b, DType::INT4, DType::BF16);
  const Kernel& qkv = find(int4.per_layer, "qkv_proj");
  EXPECT_EQ(qkv.dtype, DType::BF16);  // weight-only: dequantised into a 16-bit GEMM
  EXPECT_DOUBLE_EQ(qkv.bytes, (4096.0 + 12288) * 2 + 4096.0 * 12288 * 0.5);
  const StepKernels fp8 = decompose_step(llama2_7b(), b, DType::FP8, DType::FP8);
  EXPECT_EQ(find(fp8.per_layer, "qkv_proj").dtype, DType::FP8);
  EXPECT_EQ(find(fp8.per_layer, "silu_mul").dtype, DType::BF16);
}

TEST(StepDecomposer, NonGatedMlpUsesGelu) {
  ModelConfig m = llama2_7b();
  m.gated_mlp = false;
  StepBatch b;
  b.decode_contexts = {5};
  const StepKernels s = decompose_step(m, b, DType::FP16, DType::FP16);
  EXPECT_EQ(find(s.per_layer, "up_proj").n, 11008);
  EXPECT_EQ(count(s.per_layer, OpKind::Gelu), 1);
  EXPECT_EQ(count(s.per_layer, OpKind::SiluMul), 0);
}

TEST(StepDecomposer, PipelineStagesSplitLayers) {
  StepBatch b;
  b.decode_contexts = {5};
  EXPECT_EQ(decompose_step(llama2_70b(), b, DType::BF16, DType::BF16, {1, 4}).num_layers, 20);
  EXPECT_EQ(decompose_step(llama2_70b(), b, DType::BF16, DType::BF16, {1, 3}).num_layers, 27);
}

TEST(StepDecomposer, RejectsBadBatches) {
  StepBatch bad;
  bad.decode_contexts = {0};
  EXPECT_THROW(decompose_step(llama2_7b(), bad, DType::BF16, DType::BF16), std::invalid_argument);
  bad = {};
  bad.prefills = {{0, 0}};
  EXPECT_THROW(decompose_step(llama2_7b(), bad, DType::BF16, DType::BF16), std::invalid_argument);
}

TEST(StepDecomposer, EmptyBatchHasNoKernels) {
  const StepKernels s = decompose_step(llama2_7b(), StepBatch{}, DType::BF16, DType::BF16);
  EXPECT_TRUE(s.pre.empty());
  EXPECT_TRUE(s.per_layer.empty());
  EXPECT_TRUE(s.post.empty());
}

// A simulator loop's decomposer makes a new attention chunk every decode step: its buffers are
// reused once nobody holds them, and never while somebody does.
TEST(StepDecomposer, ReusesChunkBuffersNobodyHolds) {
  StepDecomposer decomposer(llama2_7b(), DType::BF16, DType::BF16);
  StepBatch decode;
  decode.decode_contexts = {50, 60, 70};
  decomposer.decompose(decode);
  std::set<const Kernel*> buffers;
  for (int step = 0; step < 20; ++step) {
    for (auto& c : decode.decode_contexts) ++c;
    buffers.insert(&find(decomposer.decompose(decode).per_layer, "attention_decode"));
  }
  EXPECT_LE(buffers.size(), 2u);
  // A copy held by a consumer keeps its kernels while the decomposer goes on.
  const StepKernels held = decomposer.decompose(decode);
  const StepKernels want = decompose_step(llama2_7b(), decode, DType::BF16, DType::BF16);
  for (int step = 0; step < 20; ++step) {
    for (auto& c : decode.decode_contexts) ++c;
    decomposer.decompose(decode);
  }
  EXPECT_EQ(find(held.per_layer, "attention_decode").bytes, find(want.per_layer, "attention_decode").bytes);
  EXPECT_NE(find(held.per_layer, "attention_decode").bytes,
            find(decomposer.decompose(decode).per_layer, "attention_decode").bytes);
}

// --- StepDecomposer: the same kernels as decompose_step, rebuilding only attention when it can ---

void expect_same_kernels(const KernelList& got, const KernelList& want) {
  ASSERT_EQ(names(got), names(want));
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(got[i].op, want[i].op);
    EXPECT_EQ(got[i].dtype, want[i].dtype);
    EXPECT_EQ(got[i].m, want[i].m);
    EXPECT_EQ(got[i].n, want[i].n);
    EXPECT_EQ(got[i].k, want[i].k);
    EXPECT_EQ(got[i].flops, want[i].flops);
    EXPECT_EQ(got[i].bytes, want[i].bytes);
    EXPECT_EQ(got[i].phase, want[i].phase);
    EXPECT_EQ(got[i].groups, want[i].groups);
    EXPECT_EQ(got[i].batch, want[i].batch);
  }
}

void expect_same_step(const StepKernels& got, const StepKernels& want) {
  expect_same_kernels(got.pre, want.pre);
  expect_same_kernels(got.per_layer, want.per_layer);
  expect_same_kernels(got.post, want.post);
  EXPECT_EQ(got.num_layers, want.num_layers);
}

TEST(IncrementalStepDecomposer, MatchesDecomposeStepAndSharesAllButAttention) {
  const ParallelConfig tp2{2, 1};
  StepDecomposer decomposer(llama2_7b(), DType::BF16, DType::FP8, tp2);
  StepBatch decode;
  decode.decode_contexts = {100, 200, 300};
  StepBatch longer = decode;  // the next decode step: one more token each
  for (auto& ctx : longer.decode_contexts) ++ctx;
  StepBatch mixed;  // 3 tokens, split otherwise
  mixed.prefills = {{2, 0}};
  mixed.decode_contexts = {50};
  StepBatch mixed_moved = mixed;  // the same tokens, the same split, a longer prefix
  mixed_moved.prefills[0].cached = 7;
  mixed_moved.decode_contexts = {51};
  StepBatch bigger = longer;
  bigger.decode_contexts.push_back(9);

  const StepKernels& first = decomposer.decompose(decode);
  expect_same_step(first, decompose_step(llama2_7b(), decode, DType::BF16, DType::FP8, tp2));
  StepKernels previous = first;  // a consumer's copy: it shares the chunks

  // The next decode step: a new chunk holds the attention kernel, every other chunk is the same.
  const StepKernels& second = decomposer.decompose(longer);
  expect_same_step(second, decompose_step(llama2_7b(), longer, DType::BF16, DType::FP8, tp2));
  EXPECT_EQ(test_support::kernels_in_new_chunks(previous.per_layer, second.per_layer), (std::vector<std::string>{"attention_decode"}));
  EXPECT_TRUE(test_support::kernels_in_new_chunks(previous.pre, second.pre).empty());
  EXPECT_TRUE(test_support::kernels_in_new_chunks(previous.post, second.post).empty());
  previous = second;

  // The same token count but another phase: mixed batches have other kernels (two attentions).
  const StepKernels& third = decomposer.decompose(mixed);
  expect_same_step(third, decompose_step(llama2_7b(), mixed, DType::BF16, DType::FP8, tp2));
  EXPECT_EQ(test_support::kernels_in_new_chunks(previous.per_layer, third.per_layer), names(third.per_layer));
  previous = third;

  const StepKernels& fourth = decomposer.decompose(mixed_moved);
  expect_same_step(fourth, decompose_step(llama2_7b(), mixed_moved, DType::BF16, DType::FP8, tp2));
  EXPECT_EQ(test_support::kernels_in_new_chunks(previous.per_layer, fourth.per_layer),
            (std::vector<std::string>{"attention_prefill", "attention_decode"}));
  previous = fourth;

  // Another token count: every GEMM changes.
  const StepKernels& fifth = decomposer.decompose(bigger);
  expect_same_step(fifth, decompose_step(llama2_7b(), bigger, DType::BF16, DType::FP8, tp2));
  EXPECT_EQ(test_support::kernels_in_new_chunks(previous.per_layer, fifth.per_layer), names(fifth.per_layer));
  EXPECT_EQ(test_support::kernels_in_new_chunks(previous.pre, fifth.pre), names(fifth.pre));
}

// As requests join and leave, a decode batch returns to a size it had a few steps before: the
// decomposer takes that build's kernels back (all chunks but attention's shared with it) instead
// of building them again, and they are the kernels a fresh decomposition gives. Mixed steps in
// between do not disturb it; a decode size that displaced the build (token counts 3 and 7 share a
// slot of the four) makes the next return a full build, with the same kernels.
TEST(IncrementalStepDecomposer, ARecentDecodeBatchSizeTakesItsBuildBack) {
  StepDecomposer decomposer(llama2_7b(), DType::BF16, DType::BF16);
  auto decode_of = [](std::vector<std::int64_t> contexts) {
    StepBatch b;
    b.decode_contexts = std::move(contexts);
    return b;
  };
  const StepKernels three = decomposer.decompose(decode_of({40, 50, 60}));
  decomposer.decompose(decode_of({41, 51, 61, 5}));
  decomposer.decompose(mixed_batch());
  const StepBatch back = decode_of({43, 53, 63});
  const StepKernels& again = decomposer.decompose(back);
  expect_same_step(again, decompose_step(llama2_7b(), back, DType::BF16, DType::BF16));
  EXPECT_EQ(test_support::kernels_in_new_chunks(three.per_layer, again.per_layer),
            (std::vector<std::string>{"attention_decode"}));
  EXPECT_TRUE(test_support::kernels_in_new_chunks(three.pre, again.pre).empty());
  EXPECT_TRUE(test_support::kernels_in_new_chunks(three.post, again.post).empty());

  const StepKernels before = again;
  decomposer.decompose(decode_of({1, 2, 3, 4, 5, 6, 7}));  // 7 tokens: the slot of 3
  const StepBatch later = decode_of({44, 54, 64});
  const StepKernels& rebuilt = decomposer.decompose(later);
  expect_same_step(rebuilt, decompose_step(llama2_7b(), later, DType::BF16, DType::BF16));
  EXPECT_EQ(test_support::kernels_in_new_chunks(before.pre, rebuilt.pre), names(rebuilt.pre));
}

// "x_<name>", interned (a kernel's name is a static string).
const char* tagged(const char* name) {
  static std::map<std::string, std::string> names;
  auto it = names.emplace(name, std::string("x_") + name).first;
  return it->second.c_str();
}

// A speculative proposer's kernels carry their own names; its decode steps still share every
// chunk but attention's.
TEST(IncrementalStepDecomposer, NamesItsKernelsThroughTheGivenFunction) {
  StepDecomposer decomposer(llama2_7b(), DType::BF16, DType::BF16);
  decomposer.set_kernel_names(tagged);
  StepBatch decode;
  decode.decode_contexts = {10, 20};
  const StepKernels before = decomposer.decompose(decode);
  for (const auto* list : {&before.pre, &before.per_layer, &before.post})
    for (const Kernel& k : *list) EXPECT_EQ(std::string(k.name).rfind("x_", 0), 0u) << k.name;
  EXPECT_EQ(names(before.per_layer).size(),
            names(decompose_step(llama2_7b(), decode, DType::BF16, DType::BF16).per_layer).size());
  for (auto& c : decode.decode_contexts) ++c;
  const StepKernels& after = decomposer.decompose(decode);
  EXPECT_EQ(test_support::kernels_in_new_chunks(before.per_layer, after.per_layer),
            (std::vector<std::string>{"x_attention_decode"}));
}

TEST(IncrementalStepDecomposer, RejectsBadEntriesOnTheReusePathAndRebuildsAfterwards) {
  StepDecomposer decomposer(llama2_7b(), DType::BF16, DType::BF16);
  StepBatch good;
  good.decode_contexts = {10, 20};
  decomposer.decompose(good);
  StepBatch bad = good;  // the same token count: the reuse path would apply
  bad.decode_contexts[1] = 0;
  try {
    decomposer.decompose(bad);
    FAIL() << "a decode context of 0 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("decode context must be >= 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("got 0"), std::string::npos) << e.what();
  }
  StepBatch next = good;
  next.decode_contexts = {11, 21};
  const StepKernels& after = decomposer.decompose(next);
  expect_same_step(after, decompose_step(llama2_7b(), next, DType::BF16, DType::BF16));
}

}  // namespace
}  // namespace ks::kernels
