// Tensor-parallel replicas end to end: every step's all-reduces travel over the modelled links.
// The expected step time is rebuilt here from the kernel costs, the host's launch costs and the
// ring all-reduce of the dgx_a100 preset (written out by hand).
#include <gtest/gtest.h>

#include <algorithm>

#include "app/simulation.hpp"
#include "tests/support/step_time.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/model_config.hpp"
#include "kernels/roofline.hpp"
#include "kernels/step_decomposer.hpp"

using namespace ks;

namespace {

const char* kScenario = R"(
name: tp
model: {name: llama-3-8b, dtype: bf16}
parallel: {tp: 2}
hardware:
  gpu: {kind: catalog, spec: a100_sxm_80gb, tier: roofline, kernel_overhead: 2us}
  host: {kind: fixed_overhead, prepare_overhead: 300us, finish_overhead: 200us, launch_overhead: 5us}
  topology: {kind: dgx_a100, nvlink_bandwidth: 200GB/s, nvlink_latency: 8us, collective_overhead: 10us,
             nccl_latency_scale: 0, nvls_efficiency: 0, local_copy_bandwidth: 0GB/s}
engine: {kind: vllm_v1, max_num_seqs: 64, max_num_batched_tokens: 2048}
workload: {kind: poisson, rate: 0.01/s, num_requests: 3, prompt_tokens: 1000, output_tokens: 10}
)";

// Ring over 2 ranks: overhead + steps x (latency + bytes/2 / bandwidth); all-reduce 2 steps,
// all-gather (the logits) 1.
double collective_seconds(const kernels::Kernel& k) {
  const int steps = k.op == kernels::OpKind::AllReduce ? 2 : 1;
  return 10e-6 + steps * (8e-6 + k.bytes / 2 / 200e9);
}

double step_seconds(const kernels::StepBatch& batch, int tp) {
  const auto* model = kernels::find_builtin_model("llama-3-8b");
  const auto* gpu = kernels::find_builtin_gpu("a100_sxm_80gb");
  const auto sk = kernels::decompose_step(*model, batch, kernels::DType::BF16, kernels::DType::BF16, {tp, 1});
  return test_support::async_step_time(sk, 300e-6, 5e-6, 200e-6, [&](const kernels::Kernel& k) {
           return kernels::is_collective(k.op) ? collective_seconds(k) : kernels::roofline_cost(k, *gpu, 2e-6).seconds;
         }).seconds;
}

}  // namespace

TEST(TensorParallel, StepsIncludeTheAllReducesOverTheLinks) {
  config::Document doc = config::Document::parse(kScenario, "tp.yaml");
  app::Simulation sim(doc);
  sim.run();
  const serving::BenchmarkSummary s = sim.summary();
  ASSERT_EQ(s.completed, 3);
  kernels::StepBatch prefill;
  prefill.prefills = {{1000, 0, true}};
  const double ttft = step_seconds(prefill, 2);
  EXPECT_NEAR(s.ttft.mean_ms, ttft * 1e3, 1e-6);
  // The collectives are a visible part of the step: 2 per layer + embedding, 32 layers.
  const auto report = sim.report();
  EXPECT_EQ(report["tensor_parallel"], 2);
  EXPECT_EQ(report["collectives"].get<int>(), 3 * 10 * (2 * 32 + 1 + 1));
  EXPECT_GT(report["exposed_collective_seconds"].get<double>(), 0.0);
  EXPECT_NE(ttft, step_seconds(prefill, 1));
}

TEST(TensorParallel, TooFewGpusInTheTopologyIsAConfigError) {
  config::Document doc = config::Document::parse(kScenario, "tp.yaml");
  doc.apply_override("parallel.tp=8");
  doc.apply_override("replicas=2");
  try {
    app::Simulation sim(doc);
    FAIL() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.key_path(), "hardware.topology.nodes");
    EXPECT_NE(std::string(e.what()).find("needs 16"), std::string::npos);
  }
}

TEST(TensorParallel, TwoNodesCarryTp16OverInfiniBand) {
  config::Document doc = config::Document::parse(kScenario, "tp.yaml");
  doc.apply_override("parallel.tp=8");
  doc.apply_override("replicas=2");
  doc.apply_override("hardware.topology.nodes=2");
  app::Simulation sim(doc);
  sim.run();
  EXPECT_EQ(sim.summary().completed, 3);
}
