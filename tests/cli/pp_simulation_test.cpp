// Pipeline-parallel replicas end to end. The expected step time is rebuilt here from the pp=1
// step's kernels split by layer count (16 + 16 of Llama-3-8B's 32), the host's launch costs and
// the send of the activations over one NVSwitch route of the dgx_a100 preset (written out).
#include <gtest/gtest.h>

#include "app/simulation.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/model_config.hpp"
#include "kernels/roofline.hpp"
#include "kernels/step_decomposer.hpp"
#include "tests/support/step_time.hpp"

using namespace ks;

namespace {

const char* kScenario = R"(
name: pp
model: {name: llama-3-8b, dtype: bf16}
parallel: {pp: 2}
hardware:
  gpu: {kind: catalog, spec: a100_sxm_80gb, tier: roofline, kernel_overhead: 2us}
  host: {kind: fixed_overhead, prepare_overhead: 300us, finish_overhead: 200us, launch_overhead: 5us}
  topology: {kind: dgx_a100, nvlink_bandwidth: 200GB/s, nvlink_latency: 8us, collective_overhead: 10us}
engine: {kind: vllm_v1, max_num_seqs: 64, max_num_batched_tokens: 2048}
workload: {kind: poisson, rate: 0.01/s, num_requests: 3, prompt_tokens: 1000, output_tokens: 10}
)";

// One step through both stages: stage 0 (prepare, embedding, layers 0-15) on its worker, the
// send of hidden states and residual (2 x tokens x 4096 x 2 B) over gpu0 -> NVSwitch -> gpu1
// (bytes / 200 GB/s + 2 x 4 us), stage 1 (layers 16-31, final norm, LM head, sampler, finish).
struct PipelineStep {
  double stage0, send, stage1;
  double total() const { return stage0 + send + stage1; }
};

PipelineStep pipeline_step(const kernels::StepBatch& batch) {
  const auto* model = kernels::find_builtin_model("llama-3-8b");
  const auto* gpu = kernels::find_builtin_gpu("a100_sxm_80gb");
  const kernels::StepKernels whole = kernels::decompose_step(*model, batch, kernels::DType::BF16, kernels::DType::BF16);
  kernels::StepKernels first, second;
  first.pre = whole.pre;
  first.per_layer = second.per_layer = whole.per_layer;
  first.num_layers = second.num_layers = 16;
  second.post = whole.post;
  auto cost = [&](const kernels::Kernel& k) { return kernels::roofline_cost(k, *gpu, 2e-6).seconds; };
  PipelineStep s;
  s.stage0 = test_support::async_step_time(first, 300e-6, 5e-6, 0, cost).seconds;
  s.stage1 = test_support::async_step_time(second, 0, 5e-6, 200e-6, cost).seconds;
  s.send = 2.0 * static_cast<double>(batch.num_tokens()) * 4096 * 2 / 200e9 + 8e-6;
  return s;
}

}  // namespace

TEST(PipelineParallel, AStepIsItsStagesKernelsPlusTheSendBetweenThem) {
  config::Document doc = config::Document::parse(kScenario, "pp.yaml");
  app::Simulation sim(doc);
  sim.run();
  const serving::BenchmarkSummary s = sim.summary();
  ASSERT_EQ(s.completed, 3);
  // Requests 100 s apart: each runs alone, one micro-batch at a time.
  kernels::StepBatch prefill;
  prefill.prefills = {{1000, 0, true}};
  EXPECT_NEAR(s.ttft.mean_ms, pipeline_step(prefill).total() * 1e3, 1e-6);
  // Decodes 1..9 read contexts 1001..1009; TPOT is their mean.
  double decodes = 0;
  for (int i = 1; i <= 9; ++i) {
    kernels::StepBatch d;
    d.decode_contexts = {1000 + i};
    decodes += pipeline_step(d).total();
  }
  EXPECT_NEAR(s.tpot.mean_ms, decodes / 9 * 1e3, 1e-6);
  const auto report = sim.report();
  EXPECT_EQ(report["pipeline_parallel"], 2);
  EXPECT_EQ(report["pipeline_sends"].get<int>(), 3 * 10);  // one per step (tp = 1)
  EXPECT_NEAR(report["pipeline_send_seconds"].get<double>(),
              3 * (pipeline_step(prefill).send + 9 * (8e-6 + 2.0 * 4096 * 2 / 200e9)), 1e-9);
  // Each stage's GPU ran its own half of the layers: equal GEMM work on both.
  const auto gpus = sim.gpus();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]->device_id(), 0);
  EXPECT_EQ(gpus[1]->device_id(), 1);
  const auto stats = sim.gpu_stats();
  ASSERT_EQ(stats.size(), 2u);
  auto launches = [](const proto::KernelStatsTable& t, const std::string& name) {
    std::uint64_t n = 0;
    for (const auto& [key, row] : t.rows())
      if (key.name == name) n += row.launches;
    return n;
  };
  EXPECT_GT(launches(*stats[0], "qkv_proj"), 0u);
  EXPECT_EQ(launches(*stats[0], "qkv_proj"), launches(*stats[1], "qkv_proj"));
  EXPECT_EQ(launches(*stats[0], "lm_head"), 0u);
  EXPECT_EQ(launches(*stats[1], "embedding"), 0u);
}

TEST(PipelineParallel, MoreStagesThanLayersIsAConfigErrorOnParallelPp) {
  config::Document doc = config::Document::parse(kScenario, "pp.yaml");
  doc.apply_override("parallel.pp=33");
  try {
    app::Simulation sim(doc);
    FAIL() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.key_path(), "parallel.pp");
    EXPECT_NE(std::string(e.what()).find("32 layers"), std::string::npos) << e.what();
  }
}

TEST(PipelineParallel, ReplicasTimesTpTimesPpBeyondTheTopologyIsAConfigError) {
  config::Document doc = config::Document::parse(kScenario, "pp.yaml");
  doc.apply_override("parallel.tp=4");
  doc.apply_override("replicas=2");  // 2 x 4 x 2 = 16 GPUs on one 8-GPU node
  try {
    app::Simulation sim(doc);
    FAIL() << "expected a ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.key_path(), "hardware.topology.nodes");
    EXPECT_NE(std::string(e.what()).find("needs 16"), std::string::npos) << e.what();
  }
}

// Two nodes: replica 0 on node 0 (stages on GPUs 0-3 and 4-7), replica 1 on node 1.
TEST(PipelineParallel, StagesArePlacedOnConsecutiveGpus) {
  config::Document doc = config::Document::parse(kScenario, "pp.yaml");
  doc.apply_override("parallel.tp=4");
  doc.apply_override("replicas=2");
  doc.apply_override("hardware.topology.nodes=2");
  app::Simulation sim(doc);
  std::vector<int> ids;
  for (const auto* g : sim.gpus()) ids.push_back(g->device_id());
  EXPECT_EQ(ids, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  const auto links = sim.pipeline_links();
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0]->src(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(links[0]->dst(), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(links[1]->src(), (std::vector<int>{8, 9, 10, 11}));
  sim.run();
  EXPECT_EQ(sim.summary().completed, 3);
  // Under TP every rank sends its quarter: 4 sends per step.
  EXPECT_EQ(sim.report()["pipeline_sends"].get<int>(), 4 * 3 * 10);
}
