// A Replica alone: no GPU, host or fabric module, only a StepExecutor of the contract
// (proto/engine.hpp) that takes a fixed 1 ms per step. The engine's batching then decides every
// timestamp, worked out by hand below.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/model_config.hpp"
#include "proto/engine.hpp"
#include "sc_modules/sim/sim.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/kv_cache.hpp"
#include "serving/metrics_recorder.hpp"
#include "serving/replica.hpp"
#include "serving/request.hpp"
#include "tests/support/schema_params.hpp"

using namespace ks;

namespace {

// The engine's overheads handed to the hosts (their time is in the executor's fixed step time).
constexpr double kPrepare = 1e-4, kFinish = 2e-4;

struct FixedStepExecutor : proto::StepExecutor {
  sim::Environment& env;
  sc_core::sc_time step_time;
  std::vector<std::vector<std::uint64_t>> batches;  // request ids of each step
  std::vector<double> starts;                       // when each step started (s)
  std::vector<std::uint64_t> step_ids;
  std::vector<proto::HostPhases> phases;
  std::uint64_t kernels = 0;
  FixedStepExecutor(sim::Environment& e, sc_core::sc_time t) : env(e), step_time(t) {}
  proto::StepTiming execute_step(const kernels::StepKernels& step, const proto::StepShape&, std::uint64_t step_id,
                                 const std::vector<std::uint64_t>* request_ids, proto::HostPhases p) override {
    batches.push_back(request_ids != nullptr ? *request_ids : std::vector<std::uint64_t>{});
    starts.push_back(env.now_seconds());
    step_ids.push_back(step_id);
    phases.push_back(p);
    kernels += step.pre.size() + step.post.size() + step.per_layer.size() * static_cast<std::size_t>(step.num_layers);
    env.hold(step_time);
    proto::StepTiming t;
    t.total = step_time;
    return t;
  }
};

// Activations arrive a fixed time after they are sent.
struct FixedChannel : proto::ActivationChannel {
  sc_core::sc_time latency;
  std::vector<std::uint64_t> steps;
  explicit FixedChannel(sc_core::sc_time l) : latency(l) {}
  sc_core::sc_time send(double, kernels::Phase, std::uint64_t step) override {
    steps.push_back(step);
    return sc_core::sc_time_stamp() + latency;
  }
};

std::unique_ptr<serving::BatchScheduler> scheduler(const char* kind, const std::string& yaml,
                                                   serving::KvBlockManager* kv) {
  const auto& entry = serving::scheduler_registry().get(kind, {}, "engine");
  return entry.make({test_support::resolve_params(yaml, entry.schema), kv});
}

}  // namespace

// A: prompt 100, 5 tokens, arrives at 0. B: prompt 50, 2 tokens, arrives at 0.5 ms.
// Step 1 (0-1 ms): A's prefill -> A's first token at 1 ms. Step 2 (1-2 ms): A decodes, B's
// prefill joins -> B's first token at 2 ms. Step 3 (2-3 ms): both decode -> B done at 3 ms.
// Steps 4 and 5: A alone -> A done at 5 ms.
TEST(Replica, RunsAloneOnAStepExecutorWithHandComputedTimestamps) {
  sim::Environment env;
  const kernels::ModelConfig* model = kernels::find_builtin_model("llama-3-8b");
  ASSERT_NE(model, nullptr);
  FixedStepExecutor exec(env, sc_core::sc_time(1, sc_core::SC_MS));
  auto kv = std::make_unique<serving::KvBlockManager>(1000, 16);
  const auto& entry = serving::scheduler_registry().get("vllm_v1", {}, "engine");
  auto scheduler = entry.make(
      {test_support::resolve_params("max_num_seqs: 8\nmax_num_batched_tokens: 8192\n", entry.schema), kv.get()});
  serving::MetricsRecorder metrics;
  serving::Replica replica(env, serving::ReplicaSpec{"r0", *model, kernels::DType::BF16, kernels::DType::BF16, {1, 1}},
                           exec, std::move(kv), std::move(scheduler), metrics);
  serving::Request a, b;
  a.id = 1, a.prompt_tokens = 100, a.output_tokens = 5;
  b.id = 2, b.prompt_tokens = 50, b.output_tokens = 2;
  env.process([&] {
    a.arrival_s = env.now_seconds();
    replica.submit(&a);
    env.hold(sc_core::sc_time(0.5, sc_core::SC_MS));
    b.arrival_s = env.now_seconds();
    replica.submit(&b);
  });
  env.run();
  EXPECT_DOUBLE_EQ(a.first_token_s, 1e-3);
  EXPECT_DOUBLE_EQ(a.finish_s, 5e-3);
  EXPECT_DOUBLE_EQ(b.first_scheduled_s, 1e-3);
  EXPECT_DOUBLE_EQ(b.first_token_s, 2e-3);
  EXPECT_DOUBLE_EQ(b.finish_s, 3e-3);
  ASSERT_EQ(exec.batches.size(), 5u);
  EXPECT_EQ(exec.batches[0], (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(exec.batches[1].size(), 2u);
  EXPECT_EQ(exec.batches[2].size(), 2u);
  EXPECT_EQ(exec.batches[3], (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(replica.stats().steps, 5u);
  EXPECT_EQ(replica.outstanding(), 0u);
  EXPECT_GT(exec.kernels, 0u);
}

// pp = 2, 1 ms per stage, activations arrive 0.2 ms after they leave stage 0. A (prompt 100,
// 3 tokens) and B (prompt 50, 2 tokens) arrive at 0; a step carries at most 100 tokens, so A's
// prefill fills step 0 and B's prefill goes in step 1, dispatched at once while step 0 is in
// flight (two micro-batches: the queue is full). By hand, stage 0 / stage 1 (ms):
//   step 0 (A prefill) 0-1 / 1.2-2.2   -> A's first token at 2.2
//   step 1 (B prefill) 1-2 / 2.2-3.2   -> B's first token at 3.2
//   step 2 (A decode, scheduled at 2.2) 2.2-3.2 / 3.4-4.4   -> A's 2nd token at 4.4
//   step 3 (B decode, scheduled at 3.2) 3.2-4.2 / 4.4-5.4   -> B done at 5.4
//   step 4 (A decode, scheduled at 4.4) 4.4-5.4 / 5.6-6.6   -> A done at 6.6
TEST(Replica, PipelineOfTwoStagesKeepsTwoMicroBatchesInFlight) {
  sim::Environment env;
  const kernels::ModelConfig* model = kernels::find_builtin_model("llama-3-8b");
  ASSERT_NE(model, nullptr);
  FixedStepExecutor stage0(env, sc_core::sc_time(1, sc_core::SC_MS)), stage1(env, sc_core::sc_time(1, sc_core::SC_MS));
  FixedChannel link(sc_core::sc_time(0.2, sc_core::SC_MS));
  auto kv = std::make_unique<serving::KvBlockManager>(1000, 16);
  auto sched = scheduler("vllm_v1", "max_num_seqs: 8\nmax_num_batched_tokens: 100\n", kv.get());
  serving::MetricsRecorder metrics;
  serving::Replica replica(env, serving::ReplicaSpec{"r0", *model, kernels::DType::BF16, kernels::DType::BF16, {1, 2}},
                           {&stage0, &stage1}, {&link}, std::move(kv), std::move(sched), metrics);
  replica.set_host_overheads(std::make_shared<serving::FixedHostOverheads>(kPrepare, kFinish));
  serving::Request a, b;
  a.id = 1, a.prompt_tokens = 100, a.output_tokens = 3;
  b.id = 2, b.prompt_tokens = 50, b.output_tokens = 2;
  env.process([&] {
    a.arrival_s = b.arrival_s = env.now_seconds();
    replica.submit(&a);
    replica.submit(&b);
  });
  env.run();
  const double ms = 1e-3, eps = 1e-12;
  EXPECT_NEAR(a.first_token_s, 2.2 * ms, eps);
  EXPECT_NEAR(b.first_token_s, 3.2 * ms, eps);
  EXPECT_NEAR(b.finish_s, 5.4 * ms, eps);
  EXPECT_NEAR(a.finish_s, 6.6 * ms, eps);
  const std::vector<double> starts0{0, 1 * ms, 2.2 * ms, 3.2 * ms, 4.4 * ms};
  const std::vector<double> starts1{1.2 * ms, 2.2 * ms, 3.4 * ms, 4.4 * ms, 5.6 * ms};
  ASSERT_EQ(stage0.starts.size(), 5u);
  ASSERT_EQ(stage1.starts.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(stage0.starts[i], starts0[i], eps) << "stage 0, step " << i;
    EXPECT_NEAR(stage1.starts[i], starts1[i], eps) << "stage 1, step " << i;
    EXPECT_EQ(stage0.step_ids[i], i);
    EXPECT_EQ(stage1.step_ids[i], i);
    // Stage 0 prepares the batch, the last stage samples and processes the outputs: the engine's
    // overheads travel with the step to the host that spends them.
    EXPECT_EQ(stage0.phases[i].prepare_s, kPrepare);
    EXPECT_EQ(stage0.phases[i].finish_s, 0.0);
    EXPECT_EQ(stage1.phases[i].prepare_s, 0.0);
    EXPECT_EQ(stage1.phases[i].finish_s, kFinish);
  }
  EXPECT_EQ(stage0.batches[0], (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(stage0.batches[1], (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(link.steps, (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(replica.stats().steps, 5u);
  EXPECT_EQ(replica.outstanding(), 0u);
}

// pp = 1 with multi-step scheduling (vLLM v0, num_scheduler_steps 4): a batch of decodes runs `multi_step` passes on
// the one stage, which prepares before the first pass only and processes the outputs after the
// last only; the tokens of all passes come out together. A (prompt 100, 5 tokens), 1 ms per
// pass: step 0 is the prefill (0-1 ms, first token at 1 ms); passes 1-4 are one multi-step
// batch of 4 (1-5 ms): the other 4 tokens all at 5 ms.
TEST(Replica, OneStageRunsAMultiStepBatchAsPassesOnTheSameStage) {
  sim::Environment env;
  const kernels::ModelConfig* model = kernels::find_builtin_model("llama-3-8b");
  ASSERT_NE(model, nullptr);
  FixedStepExecutor exec(env, sc_core::sc_time(1, sc_core::SC_MS));
  auto kv = std::make_unique<serving::KvBlockManager>(1000, 16);
  auto sched = scheduler("vllm_v0", "max_num_seqs: 8\nmax_num_batched_tokens: 8192\nnum_scheduler_steps: 4\n", kv.get());
  serving::MetricsRecorder metrics;
  serving::Replica replica(env, serving::ReplicaSpec{"r0", *model, kernels::DType::BF16, kernels::DType::BF16, {1, 1}},
                           exec, std::move(kv), std::move(sched), metrics);
  replica.set_host_overheads(std::make_shared<serving::FixedHostOverheads>(kPrepare, kFinish));
  serving::Request a;
  a.id = 1, a.prompt_tokens = 100, a.output_tokens = 5;
  env.process([&] {
    a.arrival_s = env.now_seconds();
    replica.submit(&a);
  });
  env.run();
  const double ms = 1e-3, eps = 1e-12;
  EXPECT_NEAR(a.first_token_s, 1 * ms, eps);
  EXPECT_NEAR(a.finish_s, 5 * ms, eps);
  ASSERT_EQ(exec.starts.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(exec.starts[i], static_cast<double>(i) * ms, eps);
    EXPECT_EQ(exec.step_ids[i], i);
  }
  const auto phases = [&](std::size_t i) { return std::make_pair(exec.phases[i].prepare_s, exec.phases[i].finish_s); };
  EXPECT_EQ(phases(0), std::make_pair(kPrepare, kFinish));  // the prefill: a batch of its own
  EXPECT_EQ(phases(1), std::make_pair(kPrepare, 0.0));
  EXPECT_EQ(phases(2), std::make_pair(0.0, 0.0));
  EXPECT_EQ(phases(3), std::make_pair(0.0, 0.0));
  EXPECT_EQ(phases(4), std::make_pair(0.0, kFinish));
  EXPECT_EQ(replica.stats().steps, 5u);
  EXPECT_EQ(replica.stats().batches, 2u);
}
