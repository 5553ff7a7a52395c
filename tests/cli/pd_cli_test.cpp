// Prefill/decode disaggregation through the kernelsight binary. A single request's TTFT is its
// prefill step (measured by a co-located run of the same TP4 replica with one output token) plus
// the KV copy worked out by hand from the fabric's link parameters, for whole-cache and layer-wise
// transfers inside a DGX H100 (NVSwitch) and across two nodes (InfiniBand); the scenario's outputs
// (summary.json per pool and transfer stats, the trace's transfers) and determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/util/csv.hpp"
#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;
using namespace ks;

namespace {

test_support::CliResult kernelsight(const std::string& args) { return test_support::run_cli(KS_CLI, args); }
fs::path temp_dir(const std::string& name) {
  const fs::path dir = test_support::fresh_temp_path("ks_pd_test_", name);
  fs::create_directories(dir);
  return dir;
}

// Llama-3-70B at TP4 on either side: a rank keeps 2 of the 8 KV heads, 80 layers x 2 heads x 128
// x (K, V) x 2 bytes = 81,920 B a token; a 1000-token prompt moves 81.92 MB from each prefill
// rank to the same decode rank.
constexpr double kRankBytes = 1000.0 * 80 * 2 * 128 * 2 * 2;
// dgx_h100 defaults: NVLink 317.6 GB/s per GPU and direction, 762 ns GPU -> NVSwitch -> GPU;
// across nodes GPU -> NIC -> IB switch -> NIC -> GPU at 45 GB/s, 2 x 8 us.
constexpr double kNvBw = 317.6e9, kNvLat = 762e-9, kIbBw = 45e9, kIbLat = 16e-6;

const char* kCommon = R"(seed: 1
profile: vllm
model: {name: llama-3-70b, dtype: bf16}
workload: {kind: poisson, rate: 1/s, num_requests: 1, prompt_tokens: 1000, output_tokens: OUT}
)";

std::string scenario(const fs::path& dir, const std::string& name, const std::string& extra, int out) {
  std::string text = std::string("name: ") + name + "\n" + kCommon + extra;
  text.replace(text.find("OUT"), 3, std::to_string(out));
  const fs::path p = dir / (name + ".yaml");
  std::ofstream(p) << text;
  return p.string();
}

nlohmann::json run(const fs::path& dir, const std::string& file, const std::string& extra_args = "") {
  const auto r = kernelsight("run " + file + " -q --out " + (dir / "out").string() + " " + extra_args);
  EXPECT_EQ(r.status, 0) << r.out;
  return nlohmann::json::parse(test_support::read_text(dir / "out" / "summary.json"));
}

// One numeric column of the run's requests.csv, a value per request.
std::vector<double> requests_column(const fs::path& dir, const std::string& column) {
  const auto table = kernels::CsvTable::read_file((dir / "out" / "requests.csv").string());
  std::vector<double> out;
  for (std::size_t r = 0; r < table.rows(); ++r) out.push_back(table.required_number(r, column));
  return out;
}

// The TTFT of the one request of a co-located TP4 replica that stops after the first token: the
// prefill step, host phases included.
double prefill_ms(const fs::path& dir, const std::string& topology) {
  const std::string file = scenario(dir, "colocated", "parallel: {tp: 4}\nhardware: {topology: " + topology +
                                                          ", gpu: {kind: catalog, spec: h100_sxm}}\n", 1);
  return run(dir / "co", file)["mean_ttft_ms"].get<double>();
}

double pd_ttft_ms(const fs::path& dir, const std::string& topology, const std::string& mode,
                  const std::string& placement, nlohmann::json* summary = nullptr) {
  const std::string file = scenario(
      dir, "pd_" + mode + "_" + placement,
      "hardware: {topology: " + topology + ", gpu: {kind: catalog, spec: h100_sxm}}\n"
      "disaggregation:\n  kv_transfer: " + mode + "\n  placement: " + placement +
          "\n  prefill: {replicas: 1, tp: 4}\n  decode: {replicas: 1, tp: 4}\n",
      2);
  const nlohmann::json j = run(dir / ("pd_" + mode + placement), file);
  if (summary != nullptr) *summary = j;
  return j["mean_ttft_ms"].get<double>();
}

}  // namespace

TEST(PdCli, WholeCacheTtftIsThePrefillStepPlusTheNvSwitchCopy) {
  const fs::path dir = temp_dir("whole_nvlink");
  const double prefill = prefill_ms(dir, "{kind: dgx_h100}");
  nlohmann::json j;
  const double ttft = pd_ttft_ms(dir, "{kind: dgx_h100}", "whole", "packed", &j);
  // Four rank pairs on their own GPU links, in parallel: 81.92 MB / 317.6 GB/s + 762 ns = 0.25870 ms.
  const double copy_ms = (kRankBytes / kNvBw + kNvLat) * 1e3;
  EXPECT_NEAR(ttft, prefill + copy_ms, 1e-6);
  const auto& t = j["disaggregation"]["kv_transfer"];
  EXPECT_EQ(t["transfers"].get<int>(), 1);
  EXPECT_EQ(t["rank_copies"].get<int>(), 4);
  EXPECT_DOUBLE_EQ(t["bytes"].get<double>(), 4 * kRankBytes);
  EXPECT_NEAR(t["mean_transfer_ms"].get<double>(), copy_ms, 1e-6);
  EXPECT_NEAR(t["mean_exposed_ms"].get<double>(), copy_ms, 1e-6);
  EXPECT_EQ(j["disaggregation"]["decode"]["first_device"].get<int>(), 4);
  fs::remove_all(dir);
}

TEST(PdCli, CrossNodeCopyCrossesInfiniBand) {
  const fs::path dir = temp_dir("whole_ib");
  const double prefill = prefill_ms(dir, "{kind: dgx_h100, nodes: 2}");
  nlohmann::json j;
  const double ttft = pd_ttft_ms(dir, "{kind: dgx_h100, nodes: 2}", "whole", "split_nodes", &j);
  // Each rank over its own NIC: 81.92 MB / 45 GB/s + 16 us = 1.8364 ms.
  EXPECT_NEAR(ttft, prefill + (kRankBytes / kIbBw + kIbLat) * 1e3, 1e-6);
  EXPECT_EQ(j["disaggregation"]["decode"]["first_device"].get<int>(), 8);
  EXPECT_EQ(j["disaggregation"]["kv_transfer"]["placement"].get<std::string>(), "split_nodes");
  fs::remove_all(dir);
}

TEST(PdCli, LayerwiseStreamingExposesOnlyTheLastLayer) {
  const fs::path dir = temp_dir("layerwise");
  const double prefill = prefill_ms(dir, "{kind: dgx_h100, nodes: 2}");
  nlohmann::json j;
  const double ttft = pd_ttft_ms(dir, "{kind: dgx_h100, nodes: 2}", "layerwise", "split_nodes", &j);
  // The prefill window W (its step, ~80 ms) hides 45 GB/s x W x 79/80 >> 81.92 MB: only the last
  // layer's 1.024 MB per rank is left: 1.024 MB / 45 GB/s + 16 us = 38.76 us.
  const double window_s = prefill * 1e-3;
  ASSERT_GT(kIbBw * window_s * 79.0 / 80.0, kRankBytes);
  const double copy_ms = (kRankBytes / 80 / kIbBw + kIbLat) * 1e3;
  EXPECT_NEAR(ttft, prefill + copy_ms, 1e-6);
  const auto& t = j["disaggregation"]["kv_transfer"];
  EXPECT_EQ(t["mode"].get<std::string>(), "layerwise");
  EXPECT_DOUBLE_EQ(t["bytes_after_prefill"].get<double>(), 4 * kRankBytes / 80);
  EXPECT_DOUBLE_EQ(t["bytes_streamed_during_prefill"].get<double>(), 4 * kRankBytes * 79 / 80);
  fs::remove_all(dir);
}

TEST(PdCli, ShippedScenarioReportsPoolsAndTransfersAndTracesTheCopies) {
  const fs::path dir = temp_dir("scenario");
  const std::string file = std::string(KS_SOURCE_DIR) + "/scenarios/llama3_70b_h100_pd.yaml";
  const std::string trace = (dir / "trace.json").string();
  const nlohmann::json j = run(dir, file, "--set workload.num_requests=20 --trace " + trace);
  EXPECT_EQ(j["completed"].get<int>(), 20);
  const auto& d = j["disaggregation"];
  for (const char* pool : {"prefill", "decode"}) {
    for (const char* key : {"engine_steps", "gpu_utilization", "mean_batch_size", "mean_kv_cache_usage",
                            "peak_kv_cache_usage", "kv_cache_blocks_per_replica"})
      EXPECT_GT(d[pool][key].get<double>(), 0) << pool << "." << key;
    EXPECT_EQ(d[pool]["gpus"].get<int>(), 4);
  }
  // The decode pool runs every step but the prefills; the prefill pool only prompts.
  EXPECT_GT(d["decode"]["engine_steps"].get<int>(), d["prefill"]["engine_steps"].get<int>());
  const auto& t = d["kv_transfer"];
  EXPECT_EQ(t["transfers"].get<int>(), 20);
  EXPECT_GE(t["p99_transfer_ms"].get<double>(), t["mean_transfer_ms"].get<double>());
  EXPECT_GT(t["mean_transfer_ms"].get<double>(), 0.26);  // 1024 tokens: at least 83.9 MB / 317.6 GB/s
  const std::string text = test_support::read_text(trace);
  EXPECT_NE(text.find("KV transfers"), std::string::npos);
  EXPECT_NE(text.find("kv request 0 gpu0 -> gpu4"), std::string::npos);
  EXPECT_NE(text.find("prefill0 gpu0 (device 0)"), std::string::npos);
  EXPECT_NE(text.find("decode0 gpu3 (device 7)"), std::string::npos);
  // Same scenario and seed: byte-identical summary.
  const fs::path again = dir / "again";
  const auto r = kernelsight("run " + file + " -q --set workload.num_requests=20 --out " + again.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(test_support::read_text(dir / "out" / "summary.json"), test_support::read_text(again / "summary.json"));
  fs::remove_all(dir);
}

// Two prefill replicas (GPUs 0 and 1, TP1) finish the same 1000-token prompt at the same time and
// both copy its KV to the one decode replica (GPU 2): the two copies share the NVSwitch -> GPU 2
// link, so the second arrives one whole copy later. Llama-3-8B: 32 layers x 8 KV heads x 128 x
// (K, V) x 2 bytes = 131,072 B a token; 131.072 MB a copy; 0.41270 ms at 317.6 GB/s.
TEST(PdCli, TwoCopiesIntoOneDecodeGpuQueueOnItsLink) {
  const fs::path dir = temp_dir("contention");
  const fs::path file = dir / "two.yaml";
  std::ofstream(file) << R"(name: two
seed: 1
profile: vllm
model: {name: llama-3-8b, dtype: bf16}
hardware:
  topology: {kind: dgx_h100}
  gpu: {kind: catalog, spec: h100_sxm}
disaggregation:
  prefill: {replicas: 2, tp: 1}
  decode: {replicas: 1, tp: 1}
workload: {kind: synthetic, arrival: closed_loop, concurrency: 2, num_requests: 2, prompt_tokens: 1000, output_tokens: 2}
)";
  const nlohmann::json j = run(dir, file.string());
  const double copy_ms = 1000.0 * 131072 / kNvBw * 1e3;
  const auto& t = j["disaggregation"]["kv_transfer"];
  EXPECT_EQ(t["transfers"].get<int>(), 2);
  // Both start when the prefills end: one takes a copy's time, the other two.
  EXPECT_NEAR(t["mean_transfer_ms"].get<double>(), 1.5 * copy_ms + kNvLat * 1e3, 1e-6);
  // requests.csv: the two TTFTs differ by exactly one copy.
  const std::vector<double> ttft = requests_column(dir, "ttft_ms");
  ASSERT_EQ(ttft.size(), 2u);
  EXPECT_NEAR(std::abs(ttft[1] - ttft[0]), copy_ms, 1e-5);
  fs::remove_all(dir);
}

// A closed-loop client in front of disaggregated pools: every request finishes, each one after
// the first `concurrency` is sent the moment an earlier one finishes, and never more than
// `concurrency` are in flight. Also with one output token, where the prefill's token is the
// answer and the request finishes on the prefill side.
TEST(PdCli, ClosedLoopClientReusesItsSlots) {
  for (const int out : {1, 8}) {
    const fs::path dir = temp_dir("closed_loop_" + std::to_string(out));
    const fs::path file = dir / "closed.yaml";
    std::ofstream(file) << "name: closed\nseed: 1\nprofile: vllm\nmodel: {name: llama-3-8b, dtype: bf16}\n"
                           "hardware:\n  topology: {kind: dgx_h100}\n  gpu: {kind: catalog, spec: h100_sxm}\n"
                           "disaggregation:\n  prefill: {replicas: 1, tp: 1}\n  decode: {replicas: 1, tp: 1}\n"
                           "workload: {kind: synthetic, arrival: closed_loop, concurrency: 3, num_requests: 12, "
                           "prompt_tokens: 500, output_tokens: "
                        << out << "}\n";
    const nlohmann::json j = run(dir, file.string());
    EXPECT_EQ(j["completed"].get<int>(), 12) << "output_tokens " << out;
    const std::vector<double> arrival = requests_column(dir, "arrival_s"), finish = requests_column(dir, "finish_s");
    ASSERT_EQ(arrival.size(), 12u);
    ASSERT_EQ(finish.size(), 12u);
    std::vector<double> done = finish;
    std::sort(done.begin(), done.end());
    std::vector<double> sent = arrival;
    std::sort(sent.begin(), sent.end());
    for (std::size_t i = 0; i < sent.size(); ++i) {
      if (i < 3) {
        EXPECT_EQ(sent[i], 0.0) << "output_tokens " << out << ", request " << i;
      } else {
        EXPECT_NEAR(sent[i], done[i - 3], 1e-9) << "output_tokens " << out << ", request " << i;
      }
      int in_flight = 0;
      for (std::size_t r = 0; r < arrival.size(); ++r) in_flight += arrival[r] <= sent[i] && finish[r] > sent[i];
      EXPECT_LE(in_flight, 3) << "output_tokens " << out << ", at " << sent[i];
    }
    fs::remove_all(dir);
  }
}
