// examples/contract_gpu as a GPU kind: the plug-in registers it through hw::add_socket_gpu_kind and
// examples/contract_gpu/scenario.yaml runs three far-apart requests on it. Every kernel takes
// exactly launch_latency = 1 us (FLOPs / 1e30 FLOP/s rounds to 0 ps) and the host costs
// prepare 100 us + finish 50 us with free launches, so a step takes 150 us + (its kernel count) us.
// The kernel counts come from kernels::decompose_step (the model's structure), not from the run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/model_config.hpp"
#include "kernels/step_decomposer.hpp"
#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kScenario = std::string(KS_SOURCE_DIR) + "/examples/contract_gpu/scenario.yaml";
const std::string kPlugin = std::string(" --plugin ") + KS_PLUGIN;

std::int64_t kernel_count(const ks::kernels::StepBatch& batch) {
  const ks::kernels::ModelConfig* model = ks::kernels::find_builtin_model("llama-3-8b");
  EXPECT_NE(model, nullptr);
  const auto step = ks::kernels::decompose_step(*model, batch, ks::kernels::DType::BF16, ks::kernels::DType::BF16);
  return static_cast<std::int64_t>(step.pre.size() + step.post.size() + step.per_layer.size() * step.num_layers);
}

std::vector<std::vector<std::string>> csv_rows(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST(ContractGpuKind, IsRegisteredByThePlugin) {
  auto r = ks::test_support::run_cli(KS_CLI, "describe contract_gpu" + kPlugin);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("launch_latency"), std::string::npos) << r.out;
  EXPECT_EQ(ks::test_support::run_cli(KS_CLI, "describe contract_gpu").status, 2);
}

TEST(ContractGpuKind, ScenarioMetricsFollowTheHandComputedStepTimes) {
  const fs::path out = fs::temp_directory_path() / ("ks_contract_gpu_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = ks::test_support::run_cli(KS_CLI, "run " + kScenario + kPlugin + " -q --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;

  ks::kernels::StepBatch prefill, decode;
  prefill.prefills.push_back({256, 0, true});
  decode.decode_contexts.push_back(257);
  const std::int64_t k_prefill = kernel_count(prefill), k_decode = kernel_count(decode);
  ASSERT_GT(k_prefill, 100);
  ASSERT_GT(k_decode, 100);
  // A request arrives at an idle engine: its prefill step gives the first token, then 15 decode
  // steps give one token each.
  const double ttft_ms = 0.150 + 0.001 * static_cast<double>(k_prefill);
  const double tpot_ms = 0.150 + 0.001 * static_cast<double>(k_decode);
  const double e2el_ms = ttft_ms + 15 * tpot_ms;

  const auto rows = csv_rows(out / "requests.csv");
  ASSERT_EQ(rows.size(), 4u);
  const auto& header = rows[0];
  auto col = [&](const char* name) {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return std::size_t{0};
  };
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_NEAR(std::stod(rows[i][col("ttft_ms")]), ttft_ms, 1e-6) << "request " << i - 1;
    EXPECT_NEAR(std::stod(rows[i][col("tpot_ms")]), tpot_ms, 1e-6) << "request " << i - 1;
    EXPECT_NEAR(std::stod(rows[i][col("e2el_ms")]), e2el_ms, 1e-6) << "request " << i - 1;
  }
  std::ifstream in(out / "summary.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["completed"].get<int>(), 3);
  EXPECT_EQ(j["engine_steps"].get<int>(), 3 * 16);
  EXPECT_EQ(j["kernels_launched"].get<std::int64_t>(), 3 * (k_prefill + 15 * k_decode));
  EXPECT_EQ(j["whole_step_launches"].get<int>(), 0) << "the contract GPU refuses StepLaunch";
  EXPECT_NEAR(j["mean_ttft_ms"].get<double>(), ttft_ms, 1e-6);
  EXPECT_NEAR(j["mean_tpot_ms"].get<double>(), tpot_ms, 1e-6);
  EXPECT_NEAR(j["mean_e2el_ms"].get<double>(), e2el_ms, 1e-6);
  // kernels.csv comes from the stats sink the app handed the GPU (no base class of ours): every
  // kernel it ran, each taking its 1 us launch latency (FLOPs at 1e30 FLOP/s add nothing).
  const auto kernels = csv_rows(out / "kernels.csv");
  ASSERT_GT(kernels.size(), 10u);
  auto kcol = [&](const char* name) {
    for (std::size_t i = 0; i < kernels[0].size(); ++i)
      if (kernels[0][i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return std::size_t{0};
  };
  std::int64_t launches = 0;
  for (std::size_t i = 1; i < kernels.size(); ++i) {
    const std::int64_t n = std::stoll(kernels[i][kcol("launches")]);
    launches += n;
    EXPECT_NEAR(std::stod(kernels[i][kcol("time_s")]), static_cast<double>(n) * 1e-6, 1e-9) << kernels[i][0];
    EXPECT_EQ(kernels[i][kcol("bound")], "compute") << kernels[i][0];
  }
  EXPECT_EQ(launches, 3 * (k_prefill + 15 * k_decode));
  fs::remove_all(out);
}

// The trace sink the app hands a plug-in GPU (hw::GpuArgs::trace): with --trace, every kernel the
// contract GPU's SC_THREAD finishes is a span on the timeline, under the GPU's process and on its
// stream's track. Step 0 is the first request's prefill: as many 1 us spans as the step has
// kernels (kernels::decompose_step), back to back (launches are free: all queue at once).
TEST(ContractGpuKind, ItsKernelsShowUpInTheTrace) {
  const fs::path out = fs::temp_directory_path() / ("ks_contract_gpu_trace_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const fs::path trace = out / "trace.json";
  const auto r = ks::test_support::run_cli(
      KS_CLI, "run " + kScenario + kPlugin + " -q --out " + out.string() + " --trace " + trace.string());
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(trace);
  const auto j = nlohmann::json::parse(in);
  const auto& events = j.is_array() ? j : j["traceEvents"];
  int gpu_pid = -1;
  for (const auto& e : events)
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name" &&
        e["args"].value("name", "") == "replica0 gpu0 (device 0)")
      gpu_pid = e["pid"].get<int>();
  ASSERT_GE(gpu_pid, 0) << "no process for the plug-in GPU";
  ks::kernels::StepBatch prefill;
  prefill.prefills.push_back({256, 0, true});
  std::int64_t spans = 0, qkv = 0;
  double first_us = 1e300, last_us = 0;
  for (const auto& e : events) {
    if (e.value("ph", "") != "X" || e["pid"].get<int>() != gpu_pid) continue;
    if (!e.contains("args") || e["args"].value("step", std::uint64_t{99}) != 0) continue;
    ++spans;
    if (e.value("name", "") == "qkv_proj") ++qkv;
    EXPECT_NEAR(e["dur"].get<double>(), 1.0, 1e-9) << e.dump();
    first_us = std::min(first_us, e["ts"].get<double>());
    last_us = std::max(last_us, e["ts"].get<double>() + e["dur"].get<double>());
  }
  EXPECT_EQ(spans, kernel_count(prefill));
  EXPECT_EQ(qkv, 32);  // one per layer of Llama-3-8B
  EXPECT_NEAR(last_us - first_us, static_cast<double>(kernel_count(prefill)), 1e-6);
  fs::remove_all(out);
}
