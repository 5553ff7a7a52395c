// Invariants of the continuous-batching scheduler, driven step by step without a simulation.
#include "serving/batch_scheduler.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <set>

#include "base/util/rng.hpp"

using namespace ks::serving;

namespace {

struct Harness {
  SchedulerLimits limits;
  KvBlockManager kv;
  ContinuousBatchingScheduler scheduler;
  std::deque<Request> requests;
  std::int64_t steps = 0;
  std::int64_t preemptions = 0;
  std::set<const Request*> admitted;  // running: admitted in an earlier step, not preempted or finished since

  Harness(SchedulerLimits l, std::int64_t blocks, std::int64_t block_size = 16, bool prefix_caching = false)
      : limits(l), kv(blocks, block_size, prefix_caching), scheduler(limits, kv) {}

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
    bool any_prompt = false, any_decode = false;
    for (const auto& s : plan.sequences) {
      // A decode continues a request admitted in an earlier step (a preempted request readmitted
      // from its cached blocks also computes one token, but it is a prefill).
      const bool decode = admitted.count(s.request) != 0 && s.tokens == 1 &&
                          s.cached_before == s.request->sequence_length() - 1;
      (decode ? any_decode : any_prompt) = true;
      if (plan.steps > 1) {
        // A multi-step pass k computes the token at cached_before + k: room for all of them.
        EXPECT_GE(s.request->kv_blocks * kv.block_size(),
                  std::min(s.cached_before + plan.steps, s.request->prompt_tokens + s.request->output_tokens - 1));
      }
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
    if (limits.prefill_first) {
      EXPECT_FALSE(any_prompt && any_decode) << "vLLM v0 mixed prompts and decodes";
    }
    // Multi-step only for a batch of decodes, and then always the configured number of passes.
    EXPECT_EQ(plan.steps, any_prompt ? 1 : limits.multi_step);
    EXPECT_LE(static_cast<std::int64_t>(plan.sequences.size()), limits.max_num_seqs);
    EXPECT_LE(static_cast<std::int64_t>(scheduler.num_running()), limits.max_num_seqs);
    // Block references held by requests add up to the blocks' reference counts, and blocks in use
    // plus free blocks are the pool: nothing leaks, nothing over-allocates.
    std::int64_t held = 0;
    std::vector<std::int64_t> refs(static_cast<std::size_t>(kv.num_blocks()), 0);
    for (const auto& r : requests) {
      held += r.kv_blocks;
      EXPECT_EQ(r.kv_blocks, static_cast<std::int64_t>(r.block_table.size()));
      for (auto b : r.block_table) ++refs[static_cast<std::size_t>(b)];
    }
    std::int64_t in_use = 0, ref_total = 0;
    for (std::int32_t b = 0; b < kv.num_blocks(); ++b) {
      EXPECT_EQ(refs[static_cast<std::size_t>(b)], kv.ref_count(b)) << "block " << b;
      in_use += kv.ref_count(b) > 0;
      ref_total += kv.ref_count(b);
    }
    EXPECT_EQ(held, ref_total);
    EXPECT_EQ(in_use + kv.free_blocks(), kv.num_blocks());
    if (!kv.prefix_caching()) {
      EXPECT_EQ(held, in_use);
    }
    preemptions += static_cast<std::int64_t>(plan.preempted.size());
    steps += plan.steps;  // one time unit per forward pass
    return complete(plan, static_cast<double>(steps));
  }

  // Completes a plan scheduled by hand (or by step()), keeping track of what is running.
  StepOutcome complete(const StepPlan& plan, double now_s) {
    StepOutcome outcome = scheduler.complete(plan, now_s);
    for (const Request* r : plan.preempted) admitted.erase(r);
    for (const auto& s : plan.sequences) admitted.insert(s.request);
    for (const Request* r : outcome.finished) admitted.erase(r);
    return outcome;
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

namespace {

// Random arrivals and lengths under random limits (`policy` adds policy flags): every step keeps
// the harness's invariants, every request finishes with all its tokens, no block leaks.
void random_workloads_finish(std::uint64_t seed, const std::function<void(SchedulerLimits&, ks::util::Rng&)>& policy,
                             std::int64_t block_size = 16, bool prefix_caching = false) {
  ks::util::Rng rng(seed);
  for (int trial = 0; trial < 20; ++trial) {
    SchedulerLimits limits{rng.uniform_int(1, 64), rng.uniform_int(16, 2048), rng.uniform() < 0.8};
    policy(limits, rng);
    // Big enough for the largest single request (prompt <= 1024, output <= 256 -> 80 blocks).
    Harness h(limits, rng.uniform_int(80, 400) * 16 / block_size, block_size, prefix_caching);
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

}  // namespace

TEST(Scheduler, RandomWorkloadsKeepEveryInvariantAndFinish) {
  random_workloads_finish(99, [](SchedulerLimits&, ks::util::Rng&) {});
}

// Multi-step batches longer than a block, with prefix caching: a preempted request readmitted
// from its own cached blocks computes one token like a decode, but it is a (re)prefill and runs
// one pass; the harness checks every multi-step batch has KV room for all its passes.
TEST(Policies, VllmV0MultiStepBeyondABlockWithPrefixCachingKeepsKvRoom) {
  random_workloads_finish(
      11,
      [](SchedulerLimits& l, ks::util::Rng& rng) {
        l.chunked_prefill = false;
        l.prefill_first = true;
        l.multi_step = static_cast<int>(rng.uniform_int(2, 64));
      },
      4, true);
}

TEST(Policies, VllmV0RandomWorkloadsKeepEveryInvariantAndFinish) {
  random_workloads_finish(7, [](SchedulerLimits& l, ks::util::Rng& rng) {
    l.chunked_prefill = false;
    l.prefill_first = true;
    l.multi_step = static_cast<int>(rng.uniform_int(1, 12));
  });
}

// The engine loop refills one plan and one outcome every step (no allocation per step): each
// must hold exactly its own step, the same as fresh objects, preemptions included.
TEST(Scheduler, ARefilledPlanAndOutcomeHoldTheSameStepsAsFreshOnes) {
  auto ids = [](const std::vector<Request*>& v) {
    std::vector<std::uint64_t> out;
    for (const Request* r : v) out.push_back(r->id);
    return out;
  };
  // 40 blocks of 16 tokens for 30 requests of up to 300 tokens: preemption is frequent.
  Harness fresh({32, 256, true}, 40), refilled({32, 256, true}, 40);
  ks::util::Rng rng(7);
  for (int i = 0; i < 30; ++i) {
    const std::int64_t prompt = rng.uniform_int(1, 200), output = rng.uniform_int(1, 100);
    fresh.add(prompt, output);
    refilled.add(prompt, output);
  }
  StepPlan plan;
  StepOutcome outcome;
  std::int64_t steps = 0, preempted = 0;
  while (fresh.scheduler.has_work() && steps < 100000) {
    const StepPlan expected = fresh.scheduler.schedule();
    refilled.scheduler.schedule(plan);
    ASSERT_EQ(plan.sequences.size(), expected.sequences.size()) << "step " << steps;
    for (std::size_t i = 0; i < plan.sequences.size(); ++i) {
      EXPECT_EQ(plan.sequences[i].request->id, expected.sequences[i].request->id);
      EXPECT_EQ(plan.sequences[i].tokens, expected.sequences[i].tokens);
      EXPECT_EQ(plan.sequences[i].cached_before, expected.sequences[i].cached_before);
    }
    EXPECT_EQ(ids(plan.preempted), ids(expected.preempted)) << "step " << steps;
    EXPECT_EQ(plan.num_tokens, expected.num_tokens);
    preempted += static_cast<std::int64_t>(plan.preempted.size());
    ++steps;
    const StepOutcome expected_outcome = fresh.scheduler.complete(expected, static_cast<double>(steps));
    refilled.scheduler.complete(plan, static_cast<double>(steps), outcome);
    ASSERT_EQ(outcome.emitted.size(), expected_outcome.emitted.size()) << "step " << steps;
    for (std::size_t i = 0; i < outcome.emitted.size(); ++i) {
      EXPECT_EQ(outcome.emitted[i].request->id, expected_outcome.emitted[i].request->id);
      EXPECT_EQ(outcome.emitted[i].previous_token_s, expected_outcome.emitted[i].previous_token_s);
    }
    EXPECT_EQ(ids(outcome.finished), ids(expected_outcome.finished)) << "step " << steps;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_FALSE(refilled.scheduler.has_work());
  EXPECT_GT(preempted, 0) << "the KV pool is small enough to preempt";
}

TEST(PrefixCaching, HitTokensAreNotRecomputed) {
  Harness h({256, 4096, true}, 1000, 16, true);
  Request& a = h.add(1000, 4);
  a.prefix_group = 5, a.group_tokens = 800;
  h.drain();
  Request& b = h.add(1000, 4);
  b.prefix_group = 5, b.group_tokens = 800;
  const StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.sequences.size(), 1u);
  EXPECT_EQ(plan.sequences[0].cached_before, 800);  // 50 full blocks of the shared 800 tokens
  EXPECT_EQ(plan.sequences[0].tokens, 200);
  EXPECT_EQ(b.cached_tokens, 800);
  h.scheduler.complete(plan, 100.0);
  h.drain();
  EXPECT_EQ(b.generated, 4);
  EXPECT_DOUBLE_EQ(h.kv.stats().hit_rate(), 800.0 / 2000.0);
}

TEST(PrefixCaching, RandomSharedPrefixWorkloadsKeepInvariantsWithPreemption) {
  auto run = [](std::uint64_t seed, std::vector<std::int64_t>* trace) {
    ks::util::Rng rng(seed);
    const SchedulerLimits limits{rng.uniform_int(4, 64), rng.uniform_int(64, 2048), true};
    Harness h(limits, rng.uniform_int(90, 300), 16, true);
    std::int64_t expected = 0, prompt_total = 0;
    for (int i = 0; i < 80; ++i) {
      Request& r = h.add(rng.uniform_int(1, 1024), rng.uniform_int(1, 200));
      if (rng.uniform() < 0.7) {
        r.prefix_group = static_cast<std::uint64_t>(rng.uniform_int(1, 3));
        r.group_tokens = 300 * static_cast<std::int64_t>(r.prefix_group);
      }
      expected += r.output_tokens;
      prompt_total += r.prompt_tokens;
      if (rng.uniform() < 0.4) h.step();
    }
    std::int64_t computed = 0;
    while (h.scheduler.has_work() && h.steps < 1000000) {
      const StepPlan plan = h.scheduler.schedule();
      for (const auto& s : plan.sequences) {
        computed += s.tokens;
        trace->push_back(static_cast<std::int64_t>(s.request->id) * 100000 + s.tokens);
      }
      ++h.steps;
      h.preemptions += static_cast<std::int64_t>(plan.preempted.size());
      h.scheduler.complete(plan, static_cast<double>(h.steps));
    }
    std::int64_t produced = 0;
    for (const auto& r : h.requests) {
      EXPECT_TRUE(r.finished());
      EXPECT_EQ(r.kv_blocks, 0);
      EXPECT_GE(r.cached_tokens, 0);
      produced += r.generated;
    }
    EXPECT_EQ(produced, expected);
    EXPECT_EQ(h.kv.free_blocks(), h.kv.num_blocks());
    EXPECT_GT(h.kv.stats().hit_tokens, 0);
    return h.preemptions;
  };
  std::int64_t preemptions = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    std::vector<std::int64_t> t1, t2;
    preemptions += run(seed, &t1);
    run(seed, &t2);
    EXPECT_EQ(t1, t2) << "same inputs, same schedule";
  }
  EXPECT_GT(preemptions, 0) << "the KV pools are small enough to preempt";
}

TEST(PrefixCaching, EveryStepKeepsTheInvariants) {
  ks::util::Rng rng(5);
  Harness h({32, 512, true}, 120, 16, true);
  for (int i = 0; i < 60; ++i) {
    Request& r = h.add(rng.uniform_int(100, 900), rng.uniform_int(1, 100));
    r.prefix_group = 1 + static_cast<std::uint64_t>(i % 2);
    r.group_tokens = 512;
    if (i % 3 == 0) h.step();
  }
  h.drain();
  EXPECT_GT(h.preemptions, 0);
  EXPECT_GT(h.kv.stats().hit_tokens, 0);
  for (const auto& r : h.requests) EXPECT_TRUE(r.finished());
}

TEST(Policies, SarathiNeverStallsDecodesBehindALongPrompt) {
  SchedulerLimits l{256, 64, true};
  l.decode_first = true;
  Harness h(l, 1000);
  Request& b = h.add(10, 30);
  h.step();  // b prefilled: decoding from now on
  Request& a = h.add(1000, 2);
  while (a.first_token_s < 0) {
    const StepPlan plan = h.scheduler.schedule();
    ASSERT_EQ(plan.sequences.size(), 2u);
    EXPECT_EQ(plan.sequences[0].request, &b);  // the decode first, every step
    EXPECT_EQ(plan.sequences[0].tokens, 1);
    EXPECT_LE(plan.sequences[1].tokens, 63);  // the prompt in chunks of the rest of the budget
    h.scheduler.complete(plan, static_cast<double>(++h.steps));
  }
  EXPECT_EQ(h.steps, 1 + (1000 + 62) / 63);
  h.drain();
}

TEST(Policies, OrcaReservesWholeSequencesAndNeverPreempts) {
  SchedulerLimits l{256, 4096, false};
  l.reserve_full = true;
  Harness h(l, 12);  // room for 192 tokens
  Request& a = h.add(64, 64);
  Request& b = h.add(64, 64);
  StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.sequences.size(), 1u);  // b must wait: a holds 8 blocks for 128 tokens
  EXPECT_EQ(a.kv_blocks, 8);
  h.scheduler.complete(plan, 1.0);
  h.drain();
  EXPECT_EQ(h.preemptions, 0);
  EXPECT_GT(b.first_token_s, a.finish_s - 1e-9);
}

TEST(Policies, StaticBatchAdmitsOnlyWhenTheBatchIsDone) {
  SchedulerLimits l{2, 65536, false};
  l.reserve_full = true;
  l.static_batch = true;
  Harness h(l, 1000);
  Request& a = h.add(10, 2);
  Request& b = h.add(10, 8);
  Request& c = h.add(10, 2);
  h.drain();
  EXPECT_EQ(a.finish_s, 2.0);
  EXPECT_EQ(b.finish_s, 8.0);
  EXPECT_EQ(c.first_token_s, 9.0);  // waited for b although a's slot freed at step 2
}

// Pipeline parallelism: the engine schedules the next micro-batch while earlier ones are in
// flight. A request of an in-flight batch is in no other batch (vLLM v1's scheduled_req_ids),
// and preemption never frees the blocks of a step still computing.
TEST(Scheduler, InFlightRequestsAreNeitherScheduledNorPreempted) {
  Harness h({256, 8192, true}, 1000);
  Request& a = h.add(10, 5);
  Request& b = h.add(10, 5);
  StepPlan first = h.scheduler.schedule();
  ASSERT_EQ(first.sequences.size(), 2u);
  for (const auto& s : first.sequences) s.request->in_flight = true;
  // Both are in the pipeline: a second micro-batch has only the new arrival.
  Request& c = h.add(10, 5);
  StepPlan second = h.scheduler.schedule();
  ASSERT_EQ(second.sequences.size(), 1u);
  EXPECT_EQ(second.sequences[0].request, &c);
  c.in_flight = true;
  // Nothing left to schedule until a batch comes back.
  EXPECT_TRUE(h.scheduler.schedule().empty());
  a.in_flight = b.in_flight = false;
  h.scheduler.complete(first, 1.0);
  StepPlan third = h.scheduler.schedule();
  ASSERT_EQ(third.sequences.size(), 2u);  // a and b decode; c is still in flight
  for (const auto& s : third.sequences) EXPECT_NE(s.request, &c);
}

TEST(Scheduler, OutOfBlocksWithAStepInFlightWaitsInsteadOfPreemptingIt) {
  // 4 blocks of 16 tokens. a (32-token prompt) prefills into 2 blocks; its first decode (a third
  // block) goes into the pipeline. b (16 tokens) takes the last block; its decode needs another.
  Harness h({256, 8192, true}, 4);
  Request& a = h.add(32, 20);
  h.scheduler.complete(h.scheduler.schedule(), 1.0);
  const StepPlan decode_a = h.scheduler.schedule();
  ASSERT_EQ(decode_a.sequences.size(), 1u);
  a.in_flight = true;
  EXPECT_EQ(a.kv_blocks, 3);
  Request& b = h.add(16, 20);
  const StepPlan pb = h.scheduler.schedule();
  ASSERT_EQ(pb.sequences.size(), 1u);
  EXPECT_EQ(pb.sequences[0].request, &b);
  h.scheduler.complete(pb, 2.0);
  // b's decode needs a block and the only other holder is in flight: no preemption, no step.
  const StepPlan stalled = h.scheduler.schedule();
  EXPECT_TRUE(stalled.empty());
  EXPECT_TRUE(stalled.preempted.empty());
  EXPECT_EQ(a.kv_blocks, 3);
  EXPECT_EQ(b.kv_blocks, 1);
  // Once a is back, the scheduler preempts as usual: b gives way to a.
  a.in_flight = false;
  h.scheduler.complete(decode_a, 3.0);
  const StepPlan resumed = h.scheduler.schedule();
  ASSERT_EQ(resumed.sequences.size(), 1u);
  EXPECT_EQ(resumed.sequences[0].request, &a);
  ASSERT_EQ(resumed.preempted.size(), 1u);
  EXPECT_EQ(resumed.preempted[0], &b);
}

// vLLM v0 without chunked prefill: new prompts run in steps of their own, before any decode.
TEST(Policies, VllmV0RunsPromptsAloneAndFirst) {
  SchedulerLimits l{256, 512, false};
  l.prefill_first = true;
  Harness h(l, 1000);
  Request& a = h.add(100, 20);
  h.step();
  ASSERT_EQ(a.generated, 1);
  Request& b = h.add(300, 5);
  Request& c = h.add(300, 5);
  // b fits the budget, c (300 more) does not: the step is b alone, a's decode waits.
  StepPlan plan = h.scheduler.schedule();
  ASSERT_EQ(plan.sequences.size(), 1u);
  EXPECT_EQ(plan.sequences[0].request, &b);
  h.complete(plan, 2.0);
  plan = h.scheduler.schedule();  // then c, still ahead of the decodes
  ASSERT_EQ(plan.sequences.size(), 1u);
  EXPECT_EQ(plan.sequences[0].request, &c);
  h.complete(plan, 3.0);
  plan = h.scheduler.schedule();  // nothing waiting: all three decode together
  EXPECT_EQ(plan.sequences.size(), 3u);
  EXPECT_EQ(plan.num_tokens, 3);
  h.complete(plan, 4.0);
  h.drain();
}

// --num-scheduler-steps: a batch of decodes runs N passes, its tokens come out together (one
// inter-token gap per N tokens), and a request ends mid-batch with exactly its own tokens.
TEST(Policies, MultiStepDecodesRunNPassesAndStreamTheirTokensTogether) {
  SchedulerLimits l{256, 4096, false};
  l.prefill_first = true;
  l.multi_step = 4;
  Harness h(l, 1000);
  Request& a = h.add(40, 10);
  Request& b = h.add(40, 3);
  StepOutcome out = h.step();  // both prompts: one pass, first tokens at t = 1
  EXPECT_EQ(a.first_token_s, 1.0);
  EXPECT_EQ(a.generated, 1);
  out = h.step();  // four passes, t = 5: a has 5 tokens, b only its 3 and is done
  EXPECT_EQ(h.steps, 5);
  EXPECT_EQ(a.generated, 5);
  EXPECT_EQ(a.computed_tokens, 40 + 5 - 1);
  EXPECT_EQ(b.generated, 3);
  EXPECT_EQ(b.finish_s, 5.0);
  ASSERT_EQ(out.emitted.size(), 2u);
  EXPECT_EQ(out.emitted[0].previous_token_s, 1.0);  // one gap of 4 passes, not four of one
  ASSERT_EQ(out.finished.size(), 1u);
  EXPECT_EQ(out.finished[0], &b);
  h.drain();
  EXPECT_EQ(a.generated, 10);
  EXPECT_EQ(a.finish_s, 1.0 + 4 + 4 + 4);  // its last 1 token still took a whole 4-pass batch
  EXPECT_EQ(h.kv.free_blocks(), h.kv.num_blocks());
}
