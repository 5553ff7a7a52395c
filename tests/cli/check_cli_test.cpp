// `kernelsight check` prints what a scenario resolved to (issue 20), and `kernelsight --version`.
// The memory plan below is computed by hand from Llama-3-8B's config.json (32 layers, hidden 4096,
// 32 heads / 8 KV heads of 128, MLP 14336, vocab 128256, untied embeddings) and the H100 SXM's
// 80 GiB:
//   parameters  = 2 x 128256 x 4096 (embedding, LM head) + 4096 (final norm)
//               + 32 x (4096x4096 + 2 x 4096x1024 + 4096x4096 + 3 x 4096x14336 + 2 x 4096)
//               = 1,050,673,152 + 4,096 + 32 x 218,112,000 = 8,030,261,248
//   weights     = 2 B x params / tp          = 16,060,522,496 B (tp 1), 8,030,261,248 B (tp 2)
//   activations = 8192 tokens x 2 B x (4 x 4096 + 2 x 14336 / tp) + 4 B x 256 seqs x 128256
//               = 869,531,648 B (tp 1), 634,650,624 B (tp 2)
//   usable      = 0.9 x 80 GiB = 77,309,411,328 B; KV = usable - weights - activations
//               = 60,379,357,184 B (tp 1), 68,644,499,456 B (tp 2)
//   KV / token  = 2 (K, V) x 32 layers x 8 heads x 128 x 2 B / tp = 131,072 B (tp 1), 65,536 B (tp 2)
//   blocks      = floor(KV / (16 x KV per token)) = 28,791 (tp 1), 65,464 (tp 2); tokens = 16 x blocks
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;

namespace {

const char* kScenario =
    "name: small\n"
    "model: {name: llama-3-8b, dtype: bf16}\n"
    "hardware:\n"
    "  gpu: {kind: catalog, spec: h100_sxm}\n"
    "engine: {kind: vllm_v1, max_num_batched_tokens: 8192, max_num_seqs: 256}\n"
    "cache: {gpu_memory_utilization: 0.9, block_size: 16}\n"
    "workload: {kind: poisson, rate: 8/s, num_requests: 5, prompt_tokens: 64, output_tokens: 8}\n";

struct Dir {
  fs::path path = ks::test_support::fresh_temp_path("ks_check_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Dir() {
    fs::create_directories(path);
    std::ofstream(path / "s.yaml") << kScenario;
  }
  ~Dir() { fs::remove_all(path); }
  ks::test_support::CliResult run(const std::string& args) const {
    return ks::test_support::run_shell("cd '" + path.string() + "' && " + std::string(KS_CLI) + " " + args + " 2>&1");
  }
};

void expect_has(const std::string& out, const std::string& part) {
  EXPECT_NE(out.find(part), std::string::npos) << "missing '" << part << "' in:\n" << out;
}

// A scenario that names no topology runs on its GPU's measured system, else on the fabric
// transferred from the GPU's spec sheet (hw/interconnect/fabric_transfer.hpp); a what-if of the
// GPU's link moves that fabric's link; a key the scenario sets wins.
TEST(CheckCli, TheDefaultFabricComesFromTheGpusMeasuredSystemOrItsSpec) {
  Dir d;
  auto r = d.run("check s.yaml --set parallel.tp=2");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_has(r.out, "tp 2 x pp 1, topology dgx_h100,");
  r = d.run("check s.yaml --set parallel.tp=2 --set hardware.gpu.spec=l4");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_has(r.out, "tp 2 x pp 1, topology pcie_l40s,");
  r = d.run("check s.yaml --set parallel.tp=2 --set hardware.gpu.spec=h100_pcie");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_has(r.out, "tp 2 x pp 1, topology pcie_pairwise_nvlink,");
  r = d.run("check s.yaml --set parallel.tp=8 --set hardware.gpu.spec=mi355x");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_has(r.out, "tp 8 x pp 1, topology nvswitch,");
  // config.resolved.yaml shows the link that ran: dgx_h100's fitted 317.6 GB/s, twice that for a
  // GPU with twice the H100's NVLink, the scenario's own figure when it sets one.
  auto link = [&](const std::string& sets) {
    const auto run = d.run("run s.yaml -q --set parallel.tp=2 " + sets + " --out out");
    EXPECT_EQ(run.status, 0) << run.out;
    std::ifstream in(d.path / "out" / "config.resolved.yaml");
    std::string line, topology_link;
    bool in_topology = false;
    while (std::getline(in, line)) {
      if (line.find("topology:") != std::string::npos) in_topology = true;
      if (in_topology && line.find("nvlink_bandwidth:") != std::string::npos) {
        topology_link = line.substr(line.find(':') + 2);
        break;
      }
    }
    return topology_link;
  };
  EXPECT_EQ(link(""), "317.6GB/s");
  EXPECT_EQ(link("--set hardware.gpu.nvlink_bandwidth=1.8TB/s"), "635.2GB/s");
  EXPECT_EQ(link("--set hardware.gpu.nvlink_bandwidth=1.8TB/s --set hardware.topology.nvlink_bandwidth=100GB/s"),
            "100GB/s");
  EXPECT_EQ(link("--set hardware.gpu.nvlink_bandwidth=1.8TB/s --set hardware.topology.kind=dgx_h100"), "317.6GB/s");
}

TEST(CheckCli, PrintsTheResolvedModelGpusAndMemoryPlanTp1) {
  Dir d;
  const auto r = d.run("check s.yaml");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_has(r.out, "ok: s.yaml (scenario 'small')\n");
  expect_has(r.out, "model:    llama-3-8b: 8.03 B parameters (8030261248), 32 layers, hidden 4096, weights bf16, KV cache bf16");
  expect_has(r.out, "GPUs:     1 x h100_sxm (NVIDIA H100 SXM5 80 GB (HBM3), 80.00 GiB): 1 replica x tp 1 x pp 1");
  expect_has(r.out, "engine:   vllm_v1, profile none, max_num_batched_tokens 8192, max_num_seqs 256, block_size 16");
  expect_has(r.out, "memory per GPU: 0.9 x 80.00 GiB = 72.00 GiB usable");
  expect_has(r.out, "weights:     16060522496 B (14.96 GiB)");
  expect_has(r.out, "activations: 869531648 B (829.25 MiB)");
  expect_has(r.out, "KV cache:    60379357184 B (56.23 GiB), 131072 B per token");
  expect_has(r.out, "KV blocks:   28791 of 16 tokens = 460656 tokens");
}

TEST(CheckCli, TensorParallelHalvesWeightsAndKvPerGpu) {
  Dir d;
  const auto r = d.run("check s.yaml --set parallel.tp=2");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_has(r.out, "GPUs:     2 x h100_sxm");
  expect_has(r.out, "1 replica x tp 2 x pp 1, topology dgx_h100");
  expect_has(r.out, "weights:     8030261248 B (7.48 GiB)");
  expect_has(r.out, "activations: 634650624 B (605.25 MiB)");
  expect_has(r.out, "KV cache:    68644499456 B (63.93 GiB), 65536 B per token");
  expect_has(r.out, "KV blocks:   65464 of 16 tokens = 1047424 tokens");
  // -q keeps the one line `sweep` relies on.
  const auto q = d.run("check s.yaml -q");
  EXPECT_EQ(q.status, 0);
  EXPECT_EQ(q.out, "ok: s.yaml (scenario 'small')\n");
}

// "kernelsight <version>" then optionally " (git <7-40 hex digits>)", then a newline. (No
// std::regex: GCC 12's <regex> warns under the sanitizer build's -O1, and warnings are errors.)
bool is_version_line(const std::string& out) {
  const std::string head = "kernelsight " + std::string(KS_PROJECT_VERSION);
  if (out.rfind(head, 0) != 0 || out.empty() || out.back() != '\n') return false;
  const std::string rest = out.substr(head.size(), out.size() - head.size() - 1);
  if (rest.empty()) return true;
  const std::string open = " (git ";
  if (rest.rfind(open, 0) != 0 || rest.back() != ')') return false;
  const std::string hash = rest.substr(open.size(), rest.size() - open.size() - 1);
  return hash.size() >= 7 && hash.size() <= 40 && hash.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(VersionCli, PrintsTheProjectVersionAndCommit) {
  for (const char* how : {"--version", "version", "-V"}) {
    const auto r = ks::test_support::run_cli(KS_CLI, how);
    EXPECT_EQ(r.status, 0) << how;
    // "kernelsight 0.1.0" from CMake's project(VERSION), then the commit when built from git.
    EXPECT_EQ(r.out.rfind("kernelsight " + std::string(KS_PROJECT_VERSION), 0), 0u) << r.out;
    EXPECT_TRUE(is_version_line(r.out)) << r.out;
  }
  // The source tree is a git checkout here, so the commit is known.
  if (fs::exists(fs::path(KS_SOURCE_DIR) / ".git")) {
    EXPECT_NE(ks::test_support::run_cli(KS_CLI, "--version").out.find(" (git "), std::string::npos);
  }
}

}  // namespace
