// Speculative decoding in the scheduler and the acceptance model, step by step without a
// simulation. Expectations are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/util/rng.hpp"
#include "serving/batch_scheduler.hpp"
#include "kernels/step_decomposer.hpp"
#include "serving/speculative.hpp"

using namespace ks::serving;

namespace {

// One request on a scheduler with speculative decoding; `accept` decides the accepted drafts.
struct SpecHarness {
  KvBlockManager kv;
  ContinuousBatchingScheduler scheduler;
  std::deque<Request> requests;
  std::vector<std::int64_t> drafts_seen;  // what accept() was asked, step by step

  SpecHarness(int k, AcceptDrafts accept, std::int64_t blocks = 64, std::int64_t block_size = 4,
              std::int64_t budget = 8192)
      : kv(blocks, block_size), scheduler(limits(budget), kv) {
    scheduler.set_speculative(k, [this, accept](std::int64_t drafts) {
      drafts_seen.push_back(drafts);
      return accept(drafts);
    });
  }
  static SchedulerLimits limits(std::int64_t budget) {
    SchedulerLimits l;
    l.max_num_batched_tokens = budget;
    return l;
  }
  Request& add(std::int64_t prompt, std::int64_t output) {
    Request& r = requests.emplace_back();
    r.id = requests.size() - 1;
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    scheduler.add(&r);
    return r;
  }
};

}  // namespace

// k = 3, every draft accepted, 8 output tokens: the prefill emits token 1; verification 1 checks
// 3 drafts and emits 3 + 1 = 4 (tokens 2-5); verification 2 may draft only 2 more (3 tokens
// are left to emit) and emits 2 + 1 = 3 (tokens 6-8). Two verification steps.
TEST(SpecDecodeScheduler, FullAcceptanceFinishesEightTokensInTwoVerifications) {
  SpecHarness h(3, [](std::int64_t d) { return d; });
  Request& r = h.add(16, 8);
  StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.sequences.size(), 1u);
  EXPECT_EQ(plan.sequences[0].tokens, 16);  // the prompt, no drafts
  StepOutcome out = h.scheduler.complete(plan, 1.0);
  EXPECT_EQ(r.generated, 1);
  EXPECT_EQ(out.spec_verified, 0);

  plan = h.scheduler.schedule();
  EXPECT_EQ(plan.sequences[0].tokens, 4);  // last token + 3 drafts
  EXPECT_EQ(plan.num_tokens, 4);           // all in the token budget
  out = h.scheduler.complete(plan, 2.0);
  EXPECT_EQ(r.generated, 5);
  EXPECT_EQ(out.emitted.size(), 1u);  // one streamed chunk
  EXPECT_EQ(out.spec_verified, 1);
  EXPECT_EQ(out.spec_draft_tokens, 3);
  EXPECT_EQ(out.spec_accepted, 3);
  EXPECT_EQ(out.spec_accepted_at, (std::vector<std::int64_t>{1, 1, 1}));

  plan = h.scheduler.schedule();
  EXPECT_EQ(plan.sequences[0].tokens, 3);  // last token + 2 drafts
  out = h.scheduler.complete(plan, 3.0);
  EXPECT_EQ(r.generated, 8);
  ASSERT_EQ(out.finished.size(), 1u);
  EXPECT_FALSE(h.scheduler.has_work());
  EXPECT_EQ(h.drafts_seen, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(h.kv.free_blocks(), 64);  // everything released
}

// Nothing accepted: every verification emits exactly the bonus token, so 8 tokens take the
// prefill and 7 verifications.
TEST(SpecDecodeScheduler, ZeroAcceptanceEmitsOneTokenPerStep) {
  SpecHarness h(4, [](std::int64_t) { return 0; });
  Request& r = h.add(10, 8);
  int steps = 0;
  while (h.scheduler.has_work()) {
    const std::int64_t before = r.generated;
    const StepPlan plan = h.scheduler.schedule();
    h.scheduler.complete(plan, ++steps);
    EXPECT_EQ(r.generated, before + 1) << "step " << steps;
  }
  EXPECT_EQ(steps, 8);
  // Drafts: min(4, tokens left to emit - 1) with 7, 6, ..., 1 left = 4, 4, 4, 3, 2, 1, 0; the
  // last step drafts nothing (a plain decode: nothing to accept).
  EXPECT_EQ(h.drafts_seen, (std::vector<std::int64_t>{4, 4, 4, 3, 2, 1}));
}

// KV: room for context + 1 + k tokens is reserved before the step; afterwards the request
// holds blocks for context + accepted + 1 only. Block size 4, prompt 15: after the prefill 15
// tokens are computed (4 blocks); the step reserves 15 + 4 = 19 tokens (5 blocks); with a
// accepted the context becomes 15 + a + 1: a = 0 -> 16 tokens, 4 blocks (one freed);
// a = 3 -> 19 tokens, 5 blocks.
TEST(SpecDecodeScheduler, RejectedDraftsReleaseTheirKvBlocks) {
  for (const std::int64_t accepted : {0, 1, 2, 3}) {
    SpecHarness h(3, [accepted](std::int64_t) { return accepted; }, 64, 4);
    Request& r = h.add(15, 20);
    h.scheduler.complete(h.scheduler.schedule(), 1.0);
    EXPECT_EQ(r.computed_tokens, 15);
    EXPECT_EQ(r.kv_blocks, 4);
    const StepPlan plan = h.scheduler.schedule();
    EXPECT_EQ(plan.sequences[0].tokens, 4);
    EXPECT_EQ(r.kv_blocks, 5) << "room for the last token and 3 drafts";
    h.scheduler.complete(plan, 2.0);
    const std::int64_t context = 15 + accepted + 1;
    EXPECT_EQ(r.computed_tokens, context);
    EXPECT_EQ(r.generated, 1 + accepted + 1);
    EXPECT_EQ(r.kv_blocks, (context + 3) / 4) << "accepted " << accepted;
    EXPECT_EQ(h.kv.free_blocks(), 64 - (context + 3) / 4);
  }
}

// The drafts count in the token budget: with a budget of 3 a decode verifies 2 drafts only.
TEST(SpecDecodeScheduler, DraftsAreCappedByTheTokenBudget) {
  SpecHarness h(5, [](std::int64_t d) { return d; }, 64, 4, 3);
  h.add(3, 30);
  h.scheduler.complete(h.scheduler.schedule(), 1.0);
  const StepPlan plan = h.scheduler.schedule();
  EXPECT_EQ(plan.sequences[0].tokens, 3);
}

TEST(SpecDecodeScheduler, MultiStepIsRejected) {
  SchedulerLimits l;
  l.chunked_prefill = false;
  l.multi_step = 4;
  KvBlockManager kv(16, 16);
  ContinuousBatchingScheduler s(l, kv);
  EXPECT_THROW(s.set_speculative(3, [](std::int64_t) { return 0; }), std::invalid_argument);
}

// 1 + E[accepted] = 1 + a + a^2 + ... + a^k = (1 - a^(k+1)) / (1 - a).
TEST(AcceptanceModel, ClosedFormOfTheMeanAcceptanceLength) {
  const AcceptanceModel m = AcceptanceModel::constant(0.7, 4);
  EXPECT_NEAR(m.mean_acceptance_length(), (1 - std::pow(0.7, 5)) / (1 - 0.7), 1e-12);  // 2.77310
  EXPECT_NEAR(m.mean_acceptance_length(), 2.77310, 1e-5);
  // Per position: 1 + 0.9 + 0.9*0.5 + 0.9*0.5*0.2 = 2.44.
  EXPECT_NEAR(AcceptanceModel({0.9, 0.5, 0.2}).mean_acceptance_length(), 2.44, 1e-12);
  EXPECT_DOUBLE_EQ(AcceptanceModel::constant(0.0, 3).mean_acceptance_length(), 1.0);
  EXPECT_DOUBLE_EQ(AcceptanceModel::constant(1.0, 3).mean_acceptance_length(), 4.0);
}

// Sampled: the mean of 1 + accepted over 200000 draws. Its spread is below 1.5 tokens, so the
// standard error is below 1.5 / sqrt(200000) = 0.0034; 0.02 is about six of them.
TEST(AcceptanceModel, SampledMeanMatchesTheClosedForm) {
  for (const double a : {0.3, 0.6, 0.8}) {
    const AcceptanceModel m = AcceptanceModel::constant(a, 5);
    ks::util::Rng rng(12345);
    const int n = 200000;
    double sum = 0;
    std::vector<double> at(5, 0.0);
    for (int i = 0; i < n; ++i) {
      const std::int64_t accepted = m.sample(5, rng);
      sum += 1.0 + static_cast<double>(accepted);
      for (std::int64_t p = 0; p < accepted; ++p) at[static_cast<std::size_t>(p)] += 1;
    }
    EXPECT_NEAR(sum / n, (1 - std::pow(a, 6)) / (1 - a), 0.02) << "a = " << a;
    // Position i is reached and accepted with probability a^i.
    for (int p = 0; p < 5; ++p) EXPECT_NEAR(at[static_cast<std::size_t>(p)] / n, std::pow(a, p + 1), 0.01);
  }
}

TEST(AcceptanceModel, EdgesAndBadInput) {
  ks::util::Rng rng(1);
  EXPECT_EQ(AcceptanceModel::constant(1.0, 3).sample(3, rng), 3);
  EXPECT_EQ(AcceptanceModel::constant(1.0, 3).sample(2, rng), 2);  // no more than drafted
  EXPECT_EQ(AcceptanceModel::constant(0.0, 3).sample(3, rng), 0);
  EXPECT_THROW(AcceptanceModel({0.5, 1.2}), std::invalid_argument);
  EXPECT_THROW(AcceptanceModel(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(AcceptanceModel::constant(0.5, 0), std::invalid_argument);
  EXPECT_THROW(AcceptanceModel::constant(0.5, 3).sample(4, rng), std::invalid_argument);
}

// Proposer memory: an EAGLE head on Llama-3-8B is one layer (218112000 parameters:
// q 4096x4096, k/v 4096x1024 each, o 4096x4096, MLP 3 x 4096x14336, 2 norms of 4096) plus the
// fusion GEMM 2 x 4096 x 4096 = 33554432, in bf16 = 2 bytes each; its KV is one layer's,
// 2 x 8 heads x 128 x 2 bytes = 4096 bytes per token.
TEST(SpecDecodeMemory, EagleHeadWeightsAndKv) {
  const ks::kernels::ModelConfig& target = *ks::kernels::find_builtin_model("llama-3-8b");
  SpecDecodeConfig spec;
  spec.method = SpecMethod::Eagle;
  spec.draft = speculative_head(target);
  spec.head_fc = true;
  EXPECT_EQ(spec.draft.layer_parameter_count(), 218112000);
  EXPECT_DOUBLE_EQ(proposer_weight_bytes(spec, ks::kernels::DType::BF16, 1), (218112000.0 + 33554432.0) * 2);
  EXPECT_DOUBLE_EQ(proposer_kv_bytes_per_token(spec, ks::kernels::DType::BF16, 1), 4096.0);
  spec.method = SpecMethod::Ngram;
  EXPECT_EQ(proposer_weight_bytes(spec, ks::kernels::DType::BF16, 1), 0.0);
}

// The verification step's kernels: 4 decodes at context 100 (their last token included), each
// with 3 drafts, i.e. 4 queries. Dense layers see batch x (k+1) = 16 tokens; the LM head and
// sampler score all 16 rows; attention reads each sequence's KV once, up to its last query
// (100 + 3 keys), and sequence i's query j sees 100 + j keys: 4 x (100 + 101 + 102 + 103) =
// 1624 (query, key) pairs, 4 x 32 heads x 128 dims x pairs FLOPs on Llama-2-7B.
TEST(SpecDecodeKernels, VerificationGemmsSeeBatchTimesKPlusOneTokens) {
  using namespace ks::kernels;
  const ModelConfig& model = *find_builtin_model("llama-2-7b");
  StepBatch batch;
  batch.decode_contexts = {100, 100, 100, 100};
  const std::vector<std::int64_t> queries{4, 4, 4, 4};
  StepKernels k;
  decompose_step(model, batch, &queries, DType::BF16, DType::BF16, {}, k);
  auto named = [](const KernelList& list, const std::string& name) {
    for (const Kernel& x : list)
      if (name == x.name) return x;
    throw std::runtime_error("no kernel " + name);
  };
  for (const char* gemm : {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"}) EXPECT_EQ(named(k.per_layer, gemm).m, 16) << gemm;
  EXPECT_EQ(named(k.post, "lm_head").m, 16);
  EXPECT_EQ(named(k.post, "sampler").m, 16);
  EXPECT_EQ(named(k.pre, "embedding").m, 16);
  const Kernel att = named(k.per_layer, "attention_decode");
  EXPECT_EQ(att.op, OpKind::AttentionDecode);
  EXPECT_EQ(att.phase, Phase::Decode);
  EXPECT_EQ(att.m, 16);
  EXPECT_EQ(att.n, 4 * 103);
  EXPECT_EQ(att.batch, 4);
  EXPECT_DOUBLE_EQ(att.flops, 4.0 * 32 * 128 * 1624);
  // KV read once (412 keys) + Q read and O written (16 queries) + the 16 new K/V rows written.
  EXPECT_DOUBLE_EQ(att.bytes, 412.0 * 2 * 32 * 128 * 2 + 2.0 * 16 * 32 * 128 * 2 + 16.0 * 2 * 32 * 128 * 2);

  // One query each is the plain decode step, kernel for kernel.
  const std::vector<std::int64_t> ones{1, 1, 1, 1};
  StepKernels a, b;
  decompose_step(model, batch, &ones, DType::BF16, DType::BF16, {}, a);
  decompose_step(model, batch, DType::BF16, DType::BF16, {}, b);
  ASSERT_EQ(a.per_layer.size(), b.per_layer.size());
  for (std::size_t i = 0; i < a.per_layer.size(); ++i) {
    EXPECT_EQ(a.per_layer[i].m, b.per_layer[i].m);
    EXPECT_EQ(a.per_layer[i].n, b.per_layer[i].n);
    EXPECT_DOUBLE_EQ(a.per_layer[i].flops, b.per_layer[i].flops);
    EXPECT_DOUBLE_EQ(a.per_layer[i].bytes, b.per_layer[i].bytes);
  }
  const std::vector<std::int64_t> wrong{4, 4};
  EXPECT_THROW(decompose_step(model, batch, &wrong, DType::BF16, DType::BF16, {}, k), std::invalid_argument);
}
