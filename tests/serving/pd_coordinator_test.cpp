// The prefill/decode coordinator (serving/pd_coordinator.hpp) on replicas whose steps take a fixed
// 1 ms (a StepExecutor of the contract) and a KV channel that takes a fixed 0.5 ms: every
// timestamp, TTFT and the back-pressure waits are worked out by hand. One elaboration per TEST.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/model_config.hpp"
#include "proto/engine.hpp"
#include "proto/kv_transfer.hpp"
#include "sc_modules/sim/sim.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/kv_cache.hpp"
#include "serving/metrics_recorder.hpp"
#include "serving/pd_coordinator.hpp"
#include "serving/replica.hpp"
#include "serving/router.hpp"
#include "tests/support/schema_params.hpp"

using namespace ks;

namespace {

struct FixedStepExecutor : proto::StepExecutor {
  sim::Environment& env;
  std::vector<std::vector<std::uint64_t>> batches;
  explicit FixedStepExecutor(sim::Environment& e) : env(e) {}
  proto::StepTiming execute_step(const kernels::StepKernels&, const proto::StepShape&, std::uint64_t,
                                 const std::vector<std::uint64_t>* ids, proto::HostPhases) override {
    batches.push_back(ids != nullptr ? *ids : std::vector<std::uint64_t>{});
    env.hold(sc_core::sc_time(1, sc_core::SC_MS));
    proto::StepTiming t;
    t.total = sc_core::sc_time(1, sc_core::SC_MS);
    return t;
  }
};

struct FixedChannel : proto::KvTransferChannel {
  struct Call {
    double at;
    std::vector<proto::KvShardCopy> copies;
    proto::KvStreaming streaming;
    std::uint64_t request;
  };
  std::vector<Call> calls;
  proto::KvTransferResult transfer(const std::vector<proto::KvShardCopy>& copies, const proto::KvStreaming& streaming,
                                   std::uint64_t request_id) override {
    calls.push_back({sc_core::sc_time_stamp().to_seconds(), copies, streaming, request_id});
    proto::KvTransferResult r;
    r.arrival = sc_core::sc_time_stamp() + sc_core::sc_time(0.5, sc_core::SC_MS);
    for (const auto& c : copies) r.bytes += c.bytes;
    r.sent_bytes = r.bytes;
    return r;
  }
};

// Llama-3-8B, TP1 on both sides (GPU 0 prefills, GPU 1 decodes): 32 layers x 8 KV heads x 128 x
// (K, V) x 2 bytes = 131,072 B of KV a token. Blocks of 16 tokens.
struct Rig {
  sim::Environment env;
  FixedStepExecutor prefill_exec{env}, decode_exec{env};
  FixedChannel channel;
  serving::MetricsRecorder prefill_metrics, metrics;
  std::unique_ptr<serving::Replica> prefill, decode;
  std::unique_ptr<serving::PdCoordinator> pd;
  std::vector<serving::Request*> finished;

  Rig(std::int64_t decode_blocks, std::int64_t decode_max_seqs) {
    const kernels::ModelConfig& model = *kernels::find_builtin_model("llama-3-8b");
    const auto& entry = serving::scheduler_registry().get("vllm_v1", {}, "engine");
    const auto params = test_support::resolve_params("max_num_seqs: 8\nmax_num_batched_tokens: 8192\n", entry.schema);
    auto make = [&](const char* name, FixedStepExecutor& exec, std::int64_t blocks, serving::MetricsRecorder& m,
                    serving::KvBlockManager*& kv_out) {
      auto kv = std::make_unique<serving::KvBlockManager>(blocks, 16);
      kv_out = kv.get();
      auto scheduler = entry.make({params, kv.get()});
      return std::make_unique<serving::Replica>(
          env, serving::ReplicaSpec{name, model, kernels::DType::BF16, kernels::DType::BF16, {1, 1}}, exec,
          std::move(kv), std::move(scheduler), m);
    };
    serving::KvBlockManager *pkv = nullptr, *dkv = nullptr;
    prefill = make("prefill0", prefill_exec, 1000, prefill_metrics, pkv);
    decode = make("decode0", decode_exec, decode_blocks, metrics, dkv);
    const auto& router = serving::router_registry().get("round_robin", {}, "router");
    serving::PdSettings settings;
    settings.model = model;
    settings.decode_max_num_seqs = decode_max_seqs;
    pd = std::make_unique<serving::PdCoordinator>(
        env, settings, std::vector<serving::PdMember>{{prefill.get(), pkv, {0}}},
        std::vector<serving::PdMember>{{decode.get(), dkv, {1}}},
        router.make({test_support::resolve_params("{}", router.schema)}),
        router.make({test_support::resolve_params("{}", router.schema)}), channel, metrics);
    pd->set_on_finish([this](serving::Request& r) { finished.push_back(&r); });
  }
  void submit_at_zero(std::vector<serving::Request*> requests) {
    env.process([this, requests] {
      for (serving::Request* r : requests) {
        r->arrival_s = env.now_seconds();
        pd->submit(r);
      }
    });
    env.run();
  }
};

constexpr double kTokenKv = 32.0 * 8 * 128 * 2 * 2;

}  // namespace

// Prompt 100, 4 tokens, at t = 0. Prefill step 0-1 ms (the prefill's token), the 100 tokens' KV
// (13.1 MB) copied 1-1.5 ms: the first token reaches the client at 1.5 ms (TTFT). Decode steps
// 1.5-2.5, 2.5-3.5, 3.5-4.5 ms give tokens 2-4: done at 4.5 ms, ITL 1 ms.
TEST(PdCoordinator, TtftIsThePrefillStepPlusTheTransfer) {
  Rig rig(1000, 256);
  serving::Request a;
  a.id = 1, a.prompt_tokens = 100, a.output_tokens = 4;
  rig.submit_at_zero({&a});
  EXPECT_DOUBLE_EQ(a.first_scheduled_s, 0.0);
  EXPECT_DOUBLE_EQ(a.first_token_s, 1.5e-3);
  EXPECT_DOUBLE_EQ(a.finish_s, 4.5e-3);
  EXPECT_EQ(a.generated, 4);
  EXPECT_EQ(a.replica, 1);  // global index: the prefill pool's replicas come first
  ASSERT_EQ(rig.channel.calls.size(), 1u);
  const auto& call = rig.channel.calls[0];
  EXPECT_DOUBLE_EQ(call.at, 1e-3);
  ASSERT_EQ(call.copies.size(), 1u);
  EXPECT_EQ(call.copies[0].src, 0);
  EXPECT_EQ(call.copies[0].dst, 1);
  EXPECT_DOUBLE_EQ(call.copies[0].bytes, 100 * kTokenKv);
  EXPECT_EQ(call.streaming.layers, 32);
  EXPECT_DOUBLE_EQ(call.streaming.window_s, 0.0);  // whole-cache mode
  // The prefill replica ran one step with the request, the decode replica three.
  EXPECT_EQ(rig.prefill_exec.batches.size(), 1u);
  EXPECT_EQ(rig.decode_exec.batches.size(), 3u);
  // The reported request: TTFT 1.5 ms, E2EL 4.5 ms; three gaps of 1 ms after the first token.
  ASSERT_EQ(rig.metrics.requests().size(), 1u);
  EXPECT_DOUBLE_EQ(rig.metrics.requests()[0].first_token_s, 1.5e-3);
  EXPECT_EQ(rig.metrics.itls().size(), 3u);
  EXPECT_DOUBLE_EQ(rig.metrics.itls().percentile(50), 1e-3);
  const auto& s = rig.pd->stats();
  EXPECT_EQ(s.transfers, 1u);
  EXPECT_DOUBLE_EQ(s.exposed_s.at(0), 0.5e-3);
  EXPECT_DOUBLE_EQ(s.wait_s.at(0), 0.0);
  EXPECT_EQ(rig.finished.size(), 1u);
}

// Decode KV of 10 blocks; each request (prompt 100 + first token: 101 tokens) needs 7. Both
// prefill in one step (0-1 ms); A's KV moves 1-1.5 ms, B waits for room. A decodes 1.5-4.5 ms
// and frees its blocks; B's KV moves 4.5-5 ms (TTFT 5 ms) and B decodes 5-8 ms.
TEST(PdCoordinator, DecodeAcceptsOnlyWhenItsKvBlocksAreFree) {
  Rig rig(10, 256);
  serving::Request a, b;
  a.id = 1, a.prompt_tokens = 100, a.output_tokens = 4;
  b.id = 2, b.prompt_tokens = 100, b.output_tokens = 4;
  rig.submit_at_zero({&a, &b});
  EXPECT_DOUBLE_EQ(a.first_token_s, 1.5e-3);
  EXPECT_DOUBLE_EQ(a.finish_s, 4.5e-3);
  EXPECT_DOUBLE_EQ(b.first_token_s, 5.0e-3);
  EXPECT_DOUBLE_EQ(b.finish_s, 8.0e-3);
  ASSERT_EQ(rig.channel.calls.size(), 2u);
  EXPECT_DOUBLE_EQ(rig.channel.calls[1].at, 4.5e-3);
  const auto& s = rig.pd->stats();
  EXPECT_EQ(s.waited, 1u);
  EXPECT_DOUBLE_EQ(s.wait_s.at(1), 3.5e-3);
  EXPECT_DOUBLE_EQ(s.exposed_s.at(1), 4.0e-3);  // prefill end (1 ms) -> KV in (5 ms)
  EXPECT_EQ(rig.prefill_exec.batches.size(), 1u);
  EXPECT_EQ(rig.prefill_exec.batches[0].size(), 2u);
}

// The same timeline when the decode replica takes one sequence at a time (max_num_seqs 1).
TEST(PdCoordinator, DecodeAcceptsOnlyUpToMaxNumSeqs) {
  Rig rig(1000, 1);
  serving::Request a, b;
  a.id = 1, a.prompt_tokens = 100, a.output_tokens = 4;
  b.id = 2, b.prompt_tokens = 100, b.output_tokens = 4;
  rig.submit_at_zero({&a, &b});
  EXPECT_DOUBLE_EQ(a.first_token_s, 1.5e-3);
  EXPECT_DOUBLE_EQ(b.first_token_s, 5.0e-3);
  EXPECT_DOUBLE_EQ(b.finish_s, 8.0e-3);
}

// A one-token request is done when its prefill is: no KV moves.
TEST(PdCoordinator, OneTokenRequestsFinishOnThePrefillSide) {
  Rig rig(1000, 256);
  serving::Request a;
  a.id = 1, a.prompt_tokens = 100, a.output_tokens = 1;
  rig.submit_at_zero({&a});
  EXPECT_DOUBLE_EQ(a.first_token_s, 1e-3);
  EXPECT_DOUBLE_EQ(a.finish_s, 1e-3);
  EXPECT_TRUE(rig.channel.calls.empty());
  ASSERT_EQ(rig.metrics.requests().size(), 1u);
  EXPECT_EQ(rig.finished.size(), 1u);
}
