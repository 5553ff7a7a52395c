// A whole scenario in-process: the engine's timing must equal what the kernel costs and host
// overheads add up to, computed here independently, and the metrics must obey their definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "kernels/calibration_store.hpp"

#include "app/simulation.hpp"
#include "base/config/error.hpp"
#include "tests/support/step_time.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/model_config.hpp"
#include "kernels/roofline.hpp"
#include "kernels/step_decomposer.hpp"

using namespace ks;

namespace {

const char* kScenario = R"(
name: e2e
seed: 3
model: {name: llama-3-8b, dtype: bf16}
hardware:
  gpu: {kind: catalog, spec: a100_sxm_80gb, tier: roofline, kernel_overhead: 2us}
  host: {kind: fixed_overhead, prepare_overhead: 300us, finish_overhead: 200us, launch_overhead: 5us}
engine: {kind: vllm_v1, max_num_seqs: 64, max_num_batched_tokens: 2048}
workload: {kind: poisson, rate: 0.01/s, num_requests: 5, prompt_tokens: 1000, output_tokens: 20}
)";

// Step time of one batch on the modelled host + GPU (asynchronous launches, see HostCpu), with
// kernel times from `kernel_seconds` (default: the roofline with a 2 us overhead).
double step_seconds(const kernels::StepBatch& batch,
                    std::function<double(const kernels::Kernel&)> kernel_seconds = nullptr, bool prepare = true,
                    bool finish = true) {
  const auto* model = kernels::find_builtin_model("llama-3-8b");
  const auto* gpu = kernels::find_builtin_gpu("a100_sxm_80gb");
  if (!kernel_seconds) kernel_seconds = [&](const kernels::Kernel& k) { return kernels::roofline_cost(k, *gpu, 2e-6).seconds; };
  const auto sk = kernels::decompose_step(*model, batch, kernels::DType::BF16, kernels::DType::BF16);
  return test_support::async_step_time(sk, prepare ? 300e-6 : 0.0, 5e-6, finish ? 200e-6 : 0.0, kernel_seconds).seconds;
}

}  // namespace

// At 0.01 req/s requests never overlap: TTFT is one 1000-token prefill step, each later token one
// decode step with the context grown by one.
TEST(Simulation, IsolatedRequestsTakeExactlyTheirStepTimes) {
  config::Document doc = config::Document::parse(kScenario, "e2e.yaml");
  app::Simulation sim(doc);
  sim.run();
  const serving::BenchmarkSummary s = sim.summary();
  ASSERT_EQ(s.completed, 5);
  EXPECT_EQ(s.total_output_tokens, 100);

  kernels::StepBatch prefill;
  prefill.prefills = {{1000, 0, true}};
  const double ttft = step_seconds(prefill);
  double decode_total = 0;
  for (int i = 1; i < 20; ++i) {
    kernels::StepBatch d;
    d.decode_contexts = {1000 + i};
    decode_total += step_seconds(d);
  }
  EXPECT_NEAR(s.ttft.mean_ms, ttft * 1e3, 1e-6);
  EXPECT_NEAR(s.ttft.p99_ms, ttft * 1e3, 1e-6);
  EXPECT_NEAR(s.tpot.mean_ms, decode_total / 19 * 1e3, 1e-6);
  EXPECT_NEAR(s.e2el.mean_ms, (ttft + decode_total) * 1e3, 1e-6);
  EXPECT_EQ(sim.total_steps(), 5u * 20u);
}

// vLLM v0 multi-step (--num-scheduler-steps 4): after the prefill, each scheduling runs four
// decode passes; the host prepares before the first and processes outputs after the last only,
// and the four tokens come out together (one inter-token gap per batch).
TEST(Simulation, MultiStepDecodesPayTheHostOncePerBatchAndStreamPerBatch) {
  config::Document doc = config::Document::parse(kScenario, "e2e.yaml");
  doc.apply_override("engine.kind=vllm_v0");
  doc.apply_override("engine.num_scheduler_steps=4");
  doc.apply_override("workload.output_tokens=9");
  app::Simulation sim(doc);
  sim.run();
  const serving::BenchmarkSummary s = sim.summary();
  ASSERT_EQ(s.completed, 5);
  kernels::StepBatch prefill;
  prefill.prefills = {{1000, 0, true}};
  const double ttft = step_seconds(prefill);
  std::vector<double> batches;  // two batches of four passes: contexts 1001-1004, 1005-1008
  for (int b = 0; b < 2; ++b) {
    double t = 0;
    for (int pass = 0; pass < 4; ++pass) {
      kernels::StepBatch d;
      d.decode_contexts = {1001 + 4 * b + pass};
      t += step_seconds(d, nullptr, pass == 0, pass == 3);
    }
    batches.push_back(t);
  }
  EXPECT_NEAR(s.ttft.mean_ms, ttft * 1e3, 1e-6);
  EXPECT_NEAR(s.e2el.mean_ms, (ttft + batches[0] + batches[1]) * 1e3, 1e-6);
  EXPECT_NEAR(s.tpot.mean_ms, (batches[0] + batches[1]) / 8 * 1e3, 1e-6);
  EXPECT_NEAR(s.itl.mean_ms, (batches[0] + batches[1]) / 2 * 1e3, 1e-6);
  EXPECT_EQ(sim.total_steps(), 5u * 9u);
  // The engine rejects what it does not model, naming the key.
  for (const char* bad : {"engine.enable_chunked_prefill=true", "parallel.pp=2"}) {
    config::Document other = config::Document::parse(kScenario, "e2e.yaml");
    other.apply_override("engine.kind=vllm_v0");
    other.apply_override("engine.num_scheduler_steps=4");
    other.apply_override(bad);
    try {
      app::Simulation rejected(other);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const config::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("engine.num_scheduler_steps"), std::string::npos) << e.what();
    }
  }
}

// Without chunked prefill a request whose recompute would not fit one step can never be
// guaranteed to run: an error naming the budget, before the simulation starts to stall.
TEST(Simulation, WithoutChunkingARequestLongerThanTheBudgetIsAnError) {
  config::Document doc = config::Document::parse(kScenario, "e2e.yaml");
  doc.apply_override("engine.kind=vllm_v0");
  doc.apply_override("workload.output_tokens=1100");  // 1000 + 1100 - 1 > 2048
  app::Simulation sim(doc);
  try {
    sim.run();
    ADD_FAILURE() << "a 2100-token request ran under a 2048-token budget without chunking";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("engine.max_num_batched_tokens is 2048"), std::string::npos) << e.what();
  }
}

// TensorRT-LLM's KV sizing takes a fraction of what the weights leave: more blocks than vLLM's
// 0.9 of the whole GPU for the same model; giving both ways at once is an error naming the key.
TEST(Simulation, KvCacheSizedFromFreeMemoryOrFromUtilizationNotBoth) {
  auto blocks = [](const char* setting) {
    config::Document doc = config::Document::parse(kScenario, "e2e.yaml");
    doc.apply_override(setting);
    app::Simulation sim(doc);
    return sim.report()["kv_cache_blocks_per_replica"].get<std::int64_t>();
  };
  const std::int64_t vllm = blocks("cache.gpu_memory_utilization=0.9");
  const std::int64_t trt = blocks("cache.kv_cache_free_memory_fraction=0.9");
  // Llama-3-8B on 80 GB: 0.9 x (80 - 15) GiB against 0.9 x 80 - 15 GiB.
  EXPECT_GT(trt, vllm);
  EXPECT_LT(trt, vllm * 11 / 10);
  config::Document both = config::Document::parse(kScenario, "e2e.yaml");
  both.apply_override("cache.gpu_memory_utilization=0.8");
  both.apply_override("cache.kv_cache_free_memory_fraction=0.9");
  try {
    app::Simulation rejected(both);
    ADD_FAILURE() << "both cache sizings were accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cache.kv_cache_free_memory_fraction"), std::string::npos) << e.what();
  }
}

// The same scenario traced and run in 7 ms slices (as the progress bar runs it): the host track's
// step events last exactly the independently computed step times, and the metrics are unchanged.
TEST(Simulation, TracedSlicedRunShowsEachStepWithItsComputedTime) {
  config::Document doc = config::Document::parse(kScenario, "e2e.yaml");
  doc.apply_override("workload.num_requests=1");
  app::Simulation sim(doc);
  sim.enable_trace({});
  int slices = 0;
  while (!sim.run_until(sim.now_seconds() + 0.007)) ++slices;
  EXPECT_GT(slices, 10);
  EXPECT_EQ(sim.completed(), 1);
  EXPECT_EQ(sim.expected_requests(), 1);

  kernels::StepBatch prefill;
  prefill.prefills = {{1000, 0, true}};
  std::vector<double> expected{step_seconds(prefill)};
  for (int i = 1; i < 20; ++i) {
    kernels::StepBatch d;
    d.decode_contexts = {1000 + i};
    expected.push_back(step_seconds(d));
  }
  EXPECT_NEAR(sim.summary().ttft.mean_ms, expected[0] * 1e3, 1e-6);

  const auto doc_json = nlohmann::json::parse(sim.trace_json());
  std::vector<double> steps_us;
  for (const auto& e : doc_json["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "step") steps_us.push_back(e["dur"].get<double>());
  ASSERT_EQ(steps_us.size(), expected.size());
  // 1 ns: each of a step's ~300 kernel times is rounded to the 1 ps resolution in the simulation.
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(steps_us[i], expected[i] * 1e6, 1e-3) << "step " << i;
}

TEST(Simulation, UnderLoadEveryRequestCompletesAndMetricsAreConsistent) {
  config::Document doc = config::Document::parse(kScenario, "e2e.yaml");
  doc.apply_override("workload.rate=20/s");
  doc.apply_override("workload.num_requests=300");
  doc.apply_override("cache.gpu_memory_utilization=0.3");  // small KV cache: forces preemptions
  doc.apply_override("workload.output_tokens=400");
  app::Simulation sim(doc);
  sim.run();
  const serving::BenchmarkSummary s = sim.summary();
  EXPECT_EQ(s.completed, 300);
  EXPECT_EQ(s.total_input_tokens, 300 * 1000);
  EXPECT_EQ(s.total_output_tokens, 300 * 400);
  EXPECT_GT(sim.report()["preemptions"].get<int>(), 0);
  // Queueing makes TTFT grow beyond an isolated prefill; E2EL >= TTFT; throughput <= offered load.
  EXPECT_GT(s.ttft.p99_ms, s.ttft.median_ms);
  EXPECT_GE(s.e2el.median_ms, s.ttft.median_ms);
  EXPECT_LE(s.request_throughput, 20.0 * 1.05);
  EXPECT_NEAR(s.output_throughput, s.total_output_tokens / s.duration_s, 1e-9);
}

// A closed-loop client keeps `concurrency` requests in flight: the first ones start at t = 0,
// every later one the moment an earlier one finishes, and never more than `concurrency` at once.
TEST(Simulation, ClosedLoopSendsTheNextRequestWhenOneFinishes) {
  config::Document doc = config::Document::parse(kScenario, "e2e.yaml");
  doc.apply_override("workload.kind=synthetic");
  doc.apply_override("workload.arrival=closed_loop");
  doc.apply_override("workload.concurrency=4");
  doc.apply_override("workload.num_requests=20");
  doc.apply_override("workload.prompt_tokens=300");
  app::Simulation sim(doc);
  sim.run();
  const auto& requests = sim.requests();
  ASSERT_EQ(requests.size(), 20u);
  std::vector<double> finishes;
  for (const serving::Request& r : requests) {
    ASSERT_GE(r.finish_s, r.arrival_s);
    finishes.push_back(r.finish_s);
  }
  std::sort(finishes.begin(), finishes.end());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (i < 4) {
      EXPECT_EQ(requests[i].arrival_s, 0.0) << i;
    } else {
      EXPECT_EQ(requests[i].arrival_s, finishes[i - 4]) << "request " << i << " starts as the " << i - 3
                                                        << "th finishes";
    }
    std::size_t in_flight = 0;
    for (const serving::Request& r : requests)
      in_flight += r.arrival_s <= requests[i].arrival_s && r.finish_s > requests[i].arrival_s;
    EXPECT_LE(in_flight, 4u) << i;
  }
}

TEST(Simulation, AMisspeltKeyIsReportedWithItsLine) {
  const std::string yaml = std::string(kScenario) + "router:\n  kind: round_robin\n  polcy: x\n";
  config::Document doc = config::Document::parse(yaml, "e2e.yaml");
  try {
    app::Simulation sim(doc);
    FAIL() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.key_path(), "router.polcy");
    EXPECT_EQ(e.mark().line, 12);
  }
}

// The learned tiers reach the simulation: with tier cross-gen every kernel takes what the shipped
// cross-generation model says (the whole Ampere generation, A100 and A40, left out of its training).
TEST(Simulation, CrossGenTierPricesKernelsWithTheShippedModel) {
  config::Document doc = config::Document::parse(kScenario, "e2e.yaml");
  doc.apply_override("hardware.gpu.tier=cross-gen");
  doc.apply_override("workload.num_requests=2");
  app::Simulation sim(doc);
  sim.run();
  const auto model = kernels::tier_model(kernels::Tier::CrossGen, "a100_sxm_80gb");
  const auto& trained = model->trained_on;
  EXPECT_EQ(std::count(trained.begin(), trained.end(), "a100_sxm_80gb"), 0);
  EXPECT_EQ(std::count(trained.begin(), trained.end(), "a40"), 0);
  EXPECT_EQ(std::count(trained.begin(), trained.end(), "h100_sxm"), 1);  // other generations stay in
  const auto* gpu = kernels::find_builtin_gpu("a100_sxm_80gb");
  auto learned = [&](const kernels::Kernel& k) { return model->cost(k, *gpu).seconds; };
  kernels::StepBatch prefill;
  prefill.prefills = {{1000, 0, true}};
  EXPECT_NEAR(sim.summary().ttft.mean_ms, step_seconds(prefill, learned) * 1e3, 1e-6);
  EXPECT_GT(step_seconds(prefill, learned), step_seconds(prefill));  // efficiency < 1 costs time
}
