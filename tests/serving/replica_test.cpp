// A Replica alone: no GPU, host or fabric module, only a StepExecutor of the contract
// (proto/engine.hpp) that takes a fixed 1 ms per step. The engine's batching then decides every
// timestamp, worked out by hand below.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
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

struct FixedStepExecutor : proto::StepExecutor {
  sim::Environment& env;
  sc_core::sc_time step_time;
  std::vector<std::vector<std::uint64_t>> batches;  // request ids of each step
  std::uint64_t kernels = 0;
  FixedStepExecutor(sim::Environment& e, sc_core::sc_time t) : env(e), step_time(t) {}
  proto::StepTiming execute_step(const kernels::StepKernels& step, const proto::StepShape&, std::uint64_t,
                                 const std::vector<std::uint64_t>* request_ids, proto::HostPhases) override {
    batches.push_back(request_ids != nullptr ? *request_ids : std::vector<std::uint64_t>{});
    kernels += step.pre.size() + step.post.size() + step.per_layer.size() * static_cast<std::size_t>(step.num_layers);
    env.hold(step_time);
    proto::StepTiming t;
    t.total = step_time;
    return t;
  }
};

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
