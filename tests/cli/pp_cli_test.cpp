// Pipeline parallelism through the kernelsight binary: micro-batches in flight (throughput),
// errors naming parallel.pp, outputs (summary.json, kernels.csv, the trace) and determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/gpu_spec.hpp"
#include "kernels/model_config.hpp"
#include "kernels/roofline.hpp"
#include "kernels/step_decomposer.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/trace_events.hpp"

namespace fs = std::filesystem;
using namespace ks;
using test_support::trace_events;
using test_support::trace_track;

namespace {

test_support::CliResult kernelsight(const std::string& args) { return test_support::run_cli(KS_CLI, args); }

std::string read(const fs::path& p) { return test_support::read_text(p); }
fs::path temp_dir(const std::string& name) { return test_support::fresh_temp_path("ks_pp_test_", name); }

const std::string kQuickstart = std::string(KS_SOURCE_DIR) + "/scenarios/quickstart.yaml";

// GPU-bound decode: no host costs, a roofline GPU, 64 short prompts arriving together, and a
// token budget of 32 that makes every micro-batch 32 decodes once the prompts are in.
const char* kBalanced = R"(name: balanced
model: {name: llama-3-8b, dtype: bf16}
hardware:
  gpu: {kind: catalog, spec: h100_sxm, tier: roofline, kernel_overhead: 0us}
  host: {kind: fixed_overhead, prepare_overhead: 0us, finish_overhead: 0us, launch_overhead: 0us}
engine: {kind: vllm_v1, max_num_seqs: 256, max_num_batched_tokens: 32}
workload: {kind: poisson, rate: 100000/s, num_requests: 64, prompt_tokens: 16, output_tokens: 64}
)";

nlohmann::json run_summary(const fs::path& dir, const std::string& scenario, const std::string& sets) {
  const auto r = kernelsight("run " + scenario + " " + sets + " -q --out " + dir.string());
  EXPECT_EQ(r.status, 0) << r.out;
  return nlohmann::json::parse(read(dir / "summary.json"));
}

}  // namespace

// Steady state, one micro-batch of 32 decodes (context ~48) takes T on one GPU. pp=1: the budget
// lets 32 requests run, one token each per step: ITL = T. pp=2: stage 0 (embedding + 16 layers,
// time P0) and stage 1 (16 layers + LM head + sampler, P1) each work on one of two micro-batches
// of 32, so 64 requests run; a request's next token comes after its batch went through both
// stages and the other batch through the slower one: ITL = max(P0 + send + P1, 2 max(P0, P1)).
// Tokens per second: 32 / T against 64 / ITL, at most pp = 2 times as many.
TEST(PipelineCli, TwoMicroBatchesInFlightNearlyDoubleDecodeThroughput) {
  const fs::path dir = temp_dir("balanced");
  fs::create_directories(dir);
  std::ofstream(dir / "balanced.yaml") << kBalanced;
  const auto one = run_summary(dir / "pp1", (dir / "balanced.yaml").string(), "");
  const auto two = run_summary(dir / "pp2", (dir / "balanced.yaml").string(), "--set parallel.pp=2");

  const auto* model = kernels::find_builtin_model("llama-3-8b");
  const auto* gpu = kernels::find_builtin_gpu("h100_sxm");
  kernels::StepBatch batch;
  batch.decode_contexts.assign(32, 48);
  const kernels::StepKernels k = kernels::decompose_step(*model, batch, kernels::DType::BF16, kernels::DType::BF16);
  auto sum = [&](const kernels::KernelList& list) {
    double s = 0;
    for (const auto& x : list) s += kernels::roofline_cost(x, *gpu, 0).seconds;
    return s;
  };
  const double layer = sum(k.per_layer);
  const double T = sum(k.pre) + 32 * layer + sum(k.post);
  const double P0 = sum(k.pre) + 16 * layer, P1 = 16 * layer + sum(k.post);
  const double send = 2.0 * 32 * 4096 * 2 / 360e9 + 6e-6;  // dgx_h100: 360 GB/s, 6 us per route
  const double itl2 = std::max(P0 + send + P1, 2 * std::max(P0, P1));

  const double itl1_ms = one["median_itl_ms"].get<double>(), itl2_ms = two["median_itl_ms"].get<double>();
  EXPECT_NEAR(itl1_ms, T * 1e3, 0.02 * T * 1e3);
  EXPECT_NEAR(itl2_ms, itl2 * 1e3, 0.02 * itl2 * 1e3);
  const double speedup = (64 / itl2_ms) / (32 / itl1_ms);
  EXPECT_GT(speedup, 1.8);  // stages balanced up to the LM head
  EXPECT_LE(speedup, 2.0);  // never more than pp times
  EXPECT_EQ(two["pipeline_parallel"], 2);
  EXPECT_EQ(one["pipeline_parallel"], 1);
  fs::remove_all(dir);
}

TEST(PipelineCli, BadPpExitsTwoNamingParallelPp) {
  auto r = kernelsight("run " + kQuickstart + " --set parallel.pp=0");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("parallel.pp"), std::string::npos) << r.out;
  r = kernelsight("run " + kQuickstart + " --set parallel.pp=33");  // Llama-3-8B has 32 layers
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("parallel.pp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("32 layers"), std::string::npos) << r.out;
  r = kernelsight("run " + kQuickstart + " --set parallel.pp=4 --set parallel.tp=4");  // 16 GPUs, one 8-GPU node
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("parallel.pp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tp x pp = 4 x 4"), std::string::npos) << r.out;
  // Half of a 70B model per A100-40GB does not fit: every stage's numbers.
  r = kernelsight("run " + kQuickstart +
                  " --set model.name=llama-2-70b --set hardware.gpu.spec=a100_sxm_40gb --set parallel.pp=2");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("stage 0 (layers 0-39)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stage 1 (layers 40-79)"), std::string::npos) << r.out;
}

TEST(PipelineCli, OutputsShowTheSendsAndTheStagesDeterministically) {
  const fs::path a = temp_dir("out_a"), b = temp_dir("out_b");
  const std::string sets = "--set workload.num_requests=20 --set parallel.pp=2 --set parallel.tp=2";
  const auto ra = kernelsight("run " + kQuickstart + " " + sets + " -q --out " + a.string() + " --trace " +
                              (a / "t.json").string());
  ASSERT_EQ(ra.status, 0) << ra.out;
  const auto rb = kernelsight("run " + kQuickstart + " " + sets + " -q --out " + b.string() + " --trace " +
                              (b / "t.json").string());
  ASSERT_EQ(rb.status, 0) << rb.out;
  for (const char* f : {"summary.json", "requests.csv", "kernels.csv", "t.json"})
    EXPECT_EQ(read(a / f), read(b / f)) << f << " differs between two runs";

  const auto summary = nlohmann::json::parse(read(a / "summary.json"));
  EXPECT_EQ(summary["pipeline_parallel"], 2);
  EXPECT_EQ(summary["tensor_parallel"], 2);
  EXPECT_EQ(summary["pipeline_sends"].get<long>(), 2 * summary["engine_steps"].get<long>());  // one per rank
  EXPECT_GT(summary["pipeline_send_seconds"].get<double>(), 0);
  // kernels.csv: a send/recv row per phase with its bytes and time.
  const std::string csv = read(a / "kernels.csv");
  EXPECT_NE(csv.find("\npp_send_recv,send_recv,decode,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\npp_send_recv,send_recv,prefill,"), std::string::npos) << csv;

  // The trace: both stages' hosts, GPUs and collectives, and the sends between them.
  const auto doc = nlohmann::json::parse(read(a / "t.json"));
  std::set<std::string> processes;
  for (const auto& m : trace_events(doc, "M"))
    if (m["name"] == "process_name") processes.insert(m["args"]["name"].get<std::string>());
  for (const char* p : {"replica0 stage0 gpu0 (device 0)", "replica0 stage0 gpu1 (device 1)",
                        "replica0 stage1 gpu0 (device 2)", "replica0 stage1 gpu1 (device 3)",
                        "replica0 stage0 TP collectives", "replica0 stage1 TP collectives", "replica0 PP send/recv"})
    EXPECT_EQ(processes.count(p), 1u) << p;
  EXPECT_NE(trace_track(doc, "stage 1 host").first, -1);
  const auto sends = trace_track(doc, "stage 0 -> 1");
  ASSERT_NE(sends.first, -1);
  std::set<std::string> pairs;
  for (const auto& e : trace_events(doc, "X"))
    if (e["pid"] == sends.first && e["tid"] == sends.second) {
      EXPECT_EQ(e["cat"], "send_recv");
      const std::string name = e["name"].get<std::string>();
      if (name.rfind("step ", 0) != 0) pairs.insert(name);  // later steps fold into one "step N" each
    }
  EXPECT_EQ(pairs, (std::set<std::string>{"send gpu0 -> gpu2", "send gpu1 -> gpu3"}));
  // Stage 1 gathers what its ranks received.
  const auto coll = trace_track(doc, "collectives over");
  int gathers = 0;
  for (const auto& e : trace_events(doc, "X"))
    if (e["name"] == "pp_recv_all_gather") ++gathers;
  EXPECT_GT(gathers, 0);
  EXPECT_NE(coll.first, -1);
  fs::remove_all(a);
  fs::remove_all(b);
}
