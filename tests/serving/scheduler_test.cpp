// Invariants of the continuous-batching scheduler, driven step by step without a simulation.
#include "serving/batch_scheduler.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "sc_modules/util/rng.hpp"

using namespace ks::serving;

namespace {

struct Harness {
  SchedulerLimits limits;
  KvBlockManager kv;
  ContinuousBatchingScheduler scheduler;
  std::deque<Request> requests;
  std::int64_t steps = 0;
  std::int64_t preemptions = 0;

  Harness(SchedulerLimits l, std::int64_t blocks, std::int64_t block_size = 16)
      : limits(l), kv(blocks, block_size), scheduler(limits, kv) {}

  Request& add(std::int64_t prompt, std::int64_t output) {
    Request& r = requests.emplace_back();
    r.id = requests.size() - 1;
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    scheduler.add(&r);
    return r;
  }

  // One step with every invariant checked; returns its plan's outcome.
  StepOutcome step() {
    const StepPlan plan = scheduler.schedule();
    EXPECT_FALSE(plan.empty()) << "scheduler stalled with work left";
    std::int64_t tokens = 0;
    std::set<const Request*> seen;
    for (const auto& s : plan.sequences) {
      EXPECT_TRUE(seen.insert(s.request).second) << "request scheduled twice in one step";
      EXPECT_GE(s.tokens, 1);
      EXPECT_EQ(s.cached_before, s.request->computed_tokens);
      // Never recompute what the cache holds, never run past the sequence.
      EXPECT_LE(s.cached_before + s.tokens, s.request->sequence_length());
      // The KV cache holds room for everything computed after this step.
      EXPECT_GE(s.request->kv_blocks * kv.block_size(), s.cached_before + s.tokens);
      tokens += s.tokens;
    }
    EXPECT_LE(tokens, limits.max_num_batched_tokens);
    EXPECT_EQ(tokens, plan.num_tokens);
    EXPECT_LE(static_cast<std::int64_t>(plan.sequences.size()), limits.max_num_seqs);
    EXPECT_LE(static_cast<std::int64_t>(scheduler.num_running()), limits.max_num_seqs);
    // Blocks held by requests add up to the blocks in use: nothing leaks, nothing over-allocates.
    std::int64_t held = 0;
    for (const auto& r : requests) held += r.kv_blocks;
    EXPECT_EQ(held, kv.num_blocks() - kv.free_blocks());
    EXPECT_GE(kv.free_blocks(), 0);
    preemptions += static_cast<std::int64_t>(plan.preempted.size());
    ++steps;
    return scheduler.complete(plan, static_cast<double>(steps));
  }

  void drain(std::int64_t max_steps = 1000000) {
    while (scheduler.has_work() && steps < max_steps) step();
    if (::testing::Test::HasFailure()) return;
    ASSERT_FALSE(scheduler.has_work()) << "did not finish within " << max_steps << " steps";
  }
};

}  // namespace

TEST(Scheduler, ChunksALongPromptToTheTokenBudget) {
  Harness h({256, 512, true}, 1000);
  Request& r = h.add(1300, 3);
  std::vector<std::int64_t> chunk_tokens;
  while (r.first_token_s < 0) {
    const auto before = r.computed_tokens;
    h.step();
    chunk_tokens.push_back(r.computed_tokens - before);
  }
  EXPECT_EQ(chunk_tokens, (std::vector<std::int64_t>{512, 512, 276}));
  h.drain();
  EXPECT_EQ(r.generated, 3);
  EXPECT_EQ(h.steps, 3 + 2);  // three prefill chunks, then two decodes
}

TEST(Scheduler, WithoutChunkingAPromptWaitsForAWholeBudget) {
  Harness h({256, 512, false}, 1000);
  h.add(100, 50);
  h.add(450, 1);
  // Step 1: the first prompt (100) runs; 450 more would exceed 512, so the second waits whole.
  StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.sequences.size(), 1u);
  EXPECT_EQ(plan.sequences[0].tokens, 100);
  h.scheduler.complete(plan, 1.0);
  // Step 2: one decode + the whole 450-token prompt = 451 <= 512.
  plan = h.scheduler.schedule();
  ASSERT_EQ(plan.sequences.size(), 2u);
  EXPECT_EQ(plan.sequences[1].tokens, 450);
  h.scheduler.complete(plan, 2.0);
  // A sequence longer than the budget can never run without chunking: a clear error, not a stall.
  h.add(600, 1);
  EXPECT_THROW(h.drain(200), std::logic_error);
}

TEST(Scheduler, DecodesGoFirstThenWaitingPrefills) {
  Harness h({256, 64, true}, 1000);
  Request& a = h.add(10, 5);
  h.step();  // a prefilled, first token out
  Request& b = h.add(200, 2);
  const StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.sequences.size(), 2u);
  EXPECT_EQ(plan.sequences[0].request, &a);
  EXPECT_EQ(plan.sequences[0].tokens, 1);
  EXPECT_EQ(plan.sequences[1].request, &b);
  EXPECT_EQ(plan.sequences[1].tokens, 63);  // the rest of the budget
  h.scheduler.complete(plan, 1.0);
}

TEST(Scheduler, RespectsMaxNumSeqs) {
  Harness h({4, 8192, true}, 100000);
  for (int i = 0; i < 20; ++i) h.add(32, 16);
  const StepPlan plan = h.scheduler.schedule();
  EXPECT_EQ(plan.sequences.size(), 4u);
  h.scheduler.complete(plan, 1.0);
  h.drain();
  for (const auto& r : h.requests) EXPECT_EQ(r.generated, 16);
}

TEST(Scheduler, PreemptsWhenKvRunsOutAndResumesByRecompute) {
  // 12 blocks of 16 tokens: two requests of 64 + 64 tokens (8 blocks each at the end) cannot both
  // finish without one being evicted.
  Harness h({256, 4096, true}, 12);
  Request& a = h.add(64, 64);
  Request& b = h.add(64, 64);
  h.drain();
  EXPECT_GT(h.preemptions, 0);
  EXPECT_EQ(a.generated, 64);
  EXPECT_EQ(b.generated, 64);
  EXPECT_GT(a.preemptions + b.preemptions, 0);
  EXPECT_EQ(h.kv.free_blocks(), h.kv.num_blocks());
}

TEST(Scheduler, RandomWorkloadsKeepEveryInvariantAndFinish) {
  ks::util::Rng rng(99);
  for (int trial = 0; trial < 20; ++trial) {
    const SchedulerLimits limits{rng.uniform_int(1, 64), rng.uniform_int(16, 2048), rng.uniform() < 0.8};
    // Big enough for the largest single request (prompt <= 1024, output <= 256 -> 80 blocks).
    Harness h(limits, rng.uniform_int(80, 400));
    std::int64_t expected_tokens = 0;
    for (int i = 0; i < 60; ++i) {
      std::int64_t prompt = rng.uniform_int(1, 1024);
      std::int64_t output = rng.uniform_int(1, 256);
      if (!limits.chunked_prefill) {
        // Without chunking a whole sequence must fit one step (recompute after preemption).
        prompt = std::max<std::int64_t>(1, std::min(prompt, limits.max_num_batched_tokens / 2));
        output = std::max<std::int64_t>(1, std::min(output, limits.max_num_batched_tokens - prompt));
      }
      h.add(prompt, output);
      expected_tokens += output;
      if (rng.uniform() < 0.3) h.step();
    }
    h.drain();
    std::int64_t produced = 0;
    for (const auto& r : h.requests) {
      EXPECT_TRUE(r.finished());
      EXPECT_EQ(r.kv_blocks, 0);
      EXPECT_GE(r.finish_s, r.first_token_s);
      produced += r.generated;
    }
    EXPECT_EQ(produced, expected_tokens);
    EXPECT_EQ(h.kv.free_blocks(), h.kv.num_blocks());
  }
}
