// The host KV tier's copies in time: the link (one sim::Resource per direction) and a Replica
// whose step waits for the blocks it loads from the host. Each TEST is its own process (one
// SystemC elaboration each); every time below is worked out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/model_config.hpp"
#include "proto/engine.hpp"
#include "sc_modules/sim/sim.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/host_kv_link.hpp"
#include "serving/kv_cache.hpp"
#include "serving/metrics_recorder.hpp"
#include "serving/replica.hpp"
#include "serving/request.hpp"
#include "tests/support/schema_params.hpp"

using namespace ks;

namespace {

constexpr double kMs = 1e-3;

// 1 GB/s, no latency: a 1 MB copy takes 1 ms.
TEST(HostKvLink, TwoLoadsAtOnceShareTheLink) {
  sim::Environment env;
  serving::HostKvLink link(env, 1e9, 0.0);
  double first = -1, second = -1, store_done = -1;
  env.process([&] {
    link.load(1e6);
    first = env.now_seconds();
  });
  env.process([&] {
    link.load(1e6);  // queues behind the first: 2 x 1 MB / 1 GB/s
    second = env.now_seconds();
  });
  env.process([&] {
    link.store(1e6);  // the other direction: starts at once, returns at once
    store_done = env.now_seconds();
  });
  env.run();
  EXPECT_DOUBLE_EQ(first, 1 * kMs);
  EXPECT_DOUBLE_EQ(second, 2 * kMs);
  EXPECT_DOUBLE_EQ(store_done, 0.0);
  EXPECT_DOUBLE_EQ(env.now_seconds(), 2 * kMs);  // the store ended at 1 ms, beside the first load
  EXPECT_EQ(link.stats().loads, 2);
  EXPECT_DOUBLE_EQ(link.stats().load_bytes, 2e6);
  EXPECT_DOUBLE_EQ(link.stats().load_seconds, 2 * kMs);
  EXPECT_EQ(link.stats().stores, 1);
  EXPECT_THROW(serving::HostKvLink(env, 0.0, 0.0), std::invalid_argument);
  EXPECT_THROW(serving::HostKvLink(env, 1e9, -1.0), std::invalid_argument);
}

// With 10 us of latency per copy: 1.01 ms, then 2.02 ms.
TEST(HostKvLink, EachCopyPaysTheLatency) {
  sim::Environment env;
  serving::HostKvLink link(env, 1e9, 10e-6);
  double first = -1, second = -1;
  env.process([&] {
    link.load(1e6);
    first = env.now_seconds();
  });
  env.process([&] {
    link.load(1e6);
    second = env.now_seconds();
  });
  env.run();
  EXPECT_NEAR(first, 1.01 * kMs, 1e-12);
  EXPECT_NEAR(second, 2.02 * kMs, 1e-12);
}

struct TimedStepExecutor : proto::StepExecutor {
  sim::Environment& env;
  std::vector<double> starts;
  explicit TimedStepExecutor(sim::Environment& e) : env(e) {}
  proto::StepTiming execute_step(const kernels::StepKernels&, const proto::StepShape&, std::uint64_t,
                                 const std::vector<std::uint64_t>*, proto::HostPhases) override {
    starts.push_back(env.now_seconds());
    env.hold(sc_core::sc_time(1, sc_core::SC_MS));
    proto::StepTiming t;
    t.total = sc_core::sc_time(1, sc_core::SC_MS);
    return t;
  }
};

serving::Request grouped(std::uint64_t id, std::uint64_t group, std::int64_t prompt) {
  serving::Request r;
  r.id = id;
  r.prefix_group = group;
  r.group_tokens = 64;
  r.prompt_tokens = prompt;
  r.output_tokens = 1;
  return r;
}

// 4 HBM blocks of 16 tokens; steps take 1 ms. A (group 1, 32 tokens) runs 0-1 ms and leaves 2
// cached blocks. B (group 2, 63 + 1 tokens) arrives at 1.5 ms, takes all 4 blocks (the 2 empty
// ones, then A's 2, evicted: to the host if there is one) and runs 1.5-2.5 ms, leaving 3 full
// cached blocks and a partial one (freed first). C (group 1, 40 tokens) arrives at 3 ms: with
// the host tier its first 32 tokens (2 blocks of 1 MB at 1 GB/s = 2 ms) load first, so its step
// runs 5-6 ms; without, it recomputes them in a step at 3-4 ms (the executor's steps cost the
// same whatever they compute).
struct TierRun {
  sim::Environment env;
  TimedStepExecutor exec{env};
  serving::MetricsRecorder metrics;
  std::unique_ptr<serving::Replica> replica;
  serving::Request a = grouped(1, 1, 32), b = grouped(2, 2, 63), c = grouped(3, 1, 40);
  explicit TierRun(bool host) {
    const kernels::ModelConfig* model = kernels::find_builtin_model("llama-3-8b");
    auto kv = std::make_unique<serving::KvBlockManager>(4, 16, true);
    if (host) kv->enable_host_tier(8);
    const auto& entry = serving::scheduler_registry().get("vllm_v1", {}, "engine");
    auto scheduler = entry.make({test_support::resolve_params("max_num_seqs: 8\n", entry.schema), kv.get()});
    replica = std::make_unique<serving::Replica>(
        env, serving::ReplicaSpec{"r0", *model, kernels::DType::BF16, kernels::DType::BF16, {1, 1}}, exec,
        std::move(kv), std::move(scheduler), metrics);
    if (host) replica->set_host_kv_link({1e9, 0.0, 1e6});
    env.process([this] {
      replica->submit(&a);
      env.hold(sim::seconds(1.5 * kMs));
      replica->submit(&b);
      env.hold(sim::seconds(1.5 * kMs));
      replica->submit(&c);
    });
    env.run();
  }
};

TEST(HostKvReplica, AStepWaitsForTheBlocksItLoadsFromTheHost) {
  TierRun run(true);
  ASSERT_EQ(run.exec.starts.size(), 3u);
  EXPECT_DOUBLE_EQ(run.exec.starts[0], 0.0);
  EXPECT_DOUBLE_EQ(run.exec.starts[1], 1.5 * kMs);
  EXPECT_NEAR(run.exec.starts[2], 5 * kMs, 1e-12);  // 3 ms + 2 x 1 MB / 1 GB/s
  EXPECT_NEAR(run.c.first_token_s, 6 * kMs, 1e-12);
  EXPECT_EQ(run.c.cached_tokens, 32);
  EXPECT_EQ(run.replica->stats().host_kv_delayed_steps, 1u);
  EXPECT_NEAR(run.replica->stats().host_kv_wait_s, 2 * kMs, 1e-12);
  const serving::HostKvLinkStats& link = run.replica->host_kv_link()->stats();
  EXPECT_EQ(link.loads, 1);
  EXPECT_DOUBLE_EQ(link.load_bytes, 2e6);
  // Written back: A's 2 blocks when B came; when C took 3 blocks (2 loads + 1 fresh), B's partial
  // block (never cached, no copy) and 2 of its full ones.
  EXPECT_EQ(link.stores, 2);
  EXPECT_DOUBLE_EQ(link.store_bytes, 4e6);
  const serving::HostKvStats& host = run.replica->kv().host_tier()->stats();
  EXPECT_EQ(host.stored_blocks, 4);
  EXPECT_EQ(host.loaded_blocks, 2);
  EXPECT_EQ(host.evicted_blocks, 0);
  EXPECT_EQ(host.hit_tokens, 32);
}

TEST(HostKvReplica, OffTheSameRunRecomputes) {
  TierRun run(false);
  ASSERT_EQ(run.exec.starts.size(), 3u);
  EXPECT_DOUBLE_EQ(run.exec.starts[2], 3 * kMs);
  EXPECT_DOUBLE_EQ(run.c.first_token_s, 4 * kMs);
  EXPECT_EQ(run.c.cached_tokens, 0);
  EXPECT_EQ(run.replica->host_kv_link(), nullptr);
  EXPECT_EQ(run.replica->stats().host_kv_delayed_steps, 0u);
}

}  // namespace
