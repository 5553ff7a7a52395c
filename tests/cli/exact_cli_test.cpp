// The fast path (step-granularity TLM transactions, memoised kernel costs) against `--exact`
// (every shortcut off). The shortcuts are exact, so the tolerance is zero: summary.json,
// requests.csv and kernels.csv must be byte-identical.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

int kernelsight(const std::string& args) {
  const int raw = std::system((std::string(KS_CLI) + " " + args + " -q > /dev/null 2>&1").c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_same_results(const std::string& name, const std::string& scenario_and_sets) {
  const fs::path base = fs::temp_directory_path() / ("ks_exact_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(base);
  ASSERT_EQ(kernelsight("run " + scenario_and_sets + " --out " + (base / "fast").string()), 0);
  ASSERT_EQ(kernelsight("run " + scenario_and_sets + " --exact --out " + (base / "exact").string()), 0);
  for (const char* file : {"summary.json", "requests.csv", "kernels.csv"}) {
    const std::string fast = read(base / "fast" / file), exact = read(base / "exact" / file);
    EXPECT_FALSE(fast.empty()) << file;
    EXPECT_EQ(fast, exact) << name << ": " << file << " differs between the fast path and --exact";
  }
  // --exact really changes the settings.
  EXPECT_NE(read(base / "exact" / "config.resolved.yaml").find("launch_granularity: kernel"), std::string::npos);
  fs::remove_all(base);
}

const std::string kSource = KS_SOURCE_DIR;

}  // namespace

TEST(Exact, GpuBoundQuickstartMatches) {
  expect_same_results("quickstart", kSource + "/scenarios/quickstart.yaml --set workload.num_requests=200");
}

// Small batches and a slow launcher: the launch-bound branch of the step timing.
TEST(Exact, LaunchBoundStepsMatch) {
  expect_same_results("launch_bound", kSource + "/scenarios/quickstart.yaml --set workload.num_requests=100 "
                                                "--set workload.rate=1/s --set hardware.host.launch_overhead=40us");
}

// Chunked prefill with trace lengths (benchmark case 0, shortened).
TEST(Exact, ChunkedPrefillTraceLengthsMatch) {
  expect_same_results("case0", kSource + "/bench/scenarios/case0_vidur_a100.yaml --set workload.num_requests=300");
}

// Tensor parallelism: the TP group refuses step launches, so both runs launch kernel by kernel.
TEST(Exact, TensorParallelMatches) {
  expect_same_results("tp", kSource + "/scenarios/quickstart.yaml --set workload.num_requests=60 --set parallel.tp=2");
}
