// The fast path (step-granularity TLM transactions, memoised kernel costs) against `--exact`
// (every shortcut off). On one GPU the shortcuts are exact, so the tolerance is zero:
// summary.json, requests.csv and kernels.csv must be byte-identical. A TP group's step launch
// times each collective once on idle links in whole picoseconds, where the fabric times every
// one from its absolute start in floating point: the stated tolerance there is a relative 1e-6
// on every number (kernels.csv, GPU work only, stays identical).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

// summary.json's whole_step_launches (how the steps were sent, the one key allowed to differ);
// `summary` loses the line.
long long take_whole_step_launches(std::string& summary) {
  const std::string key = "\"whole_step_launches\": ";
  const auto at = summary.find(key);
  if (at == std::string::npos) return -1;
  const long long n = std::atoll(summary.c_str() + at + key.size());
  summary.erase(at, summary.find('\n', at) - at);
  return n;
}

void expect_same_results(const std::string& name, const std::string& scenario_and_sets) {
  const fs::path base = fs::temp_directory_path() / ("ks_exact_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(base);
  ASSERT_EQ(kernelsight("run " + scenario_and_sets + " --out " + (base / "fast").string()), 0);
  ASSERT_EQ(kernelsight("run " + scenario_and_sets + " --exact --out " + (base / "exact").string()), 0);
  for (const char* file : {"summary.json", "requests.csv", "kernels.csv"}) {
    std::string fast = read(base / "fast" / file), exact = read(base / "exact" / file);
    if (std::string(file) == "summary.json") {
      EXPECT_GT(take_whole_step_launches(fast), 0);
      EXPECT_EQ(take_whole_step_launches(exact), 0);
    }
    EXPECT_FALSE(fast.empty()) << file;
    EXPECT_EQ(fast, exact) << name << ": " << file << " differs between the fast path and --exact";
  }
  // --exact really changes the settings.
  EXPECT_NE(read(base / "exact" / "config.resolved.yaml").find("launch_granularity: kernel"), std::string::npos);
  fs::remove_all(base);
}

// Every token of the two texts equal, numbers within a relative `tolerance` (absolute 1e-9 near 0).
void expect_numerically_equal(const std::string& a, const std::string& b, double tolerance, const std::string& what) {
  auto tokens = [](const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
      if (c == ',' || c == '\n' || c == ' ' || c == ':') {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
  };
  const auto ta = tokens(a), tb = tokens(b);
  ASSERT_EQ(ta.size(), tb.size()) << what;
  int reported = 0;
  for (std::size_t i = 0; i < ta.size() && reported < 5; ++i) {
    if (ta[i] == tb[i]) continue;
    char* end_a = nullptr;
    char* end_b = nullptr;
    const double x = std::strtod(ta[i].c_str(), &end_a), y = std::strtod(tb[i].c_str(), &end_b);
    const bool numbers = *end_a == '\0' && *end_b == '\0';
    if (numbers && std::fabs(x - y) <= tolerance * std::max(std::fabs(x), std::fabs(y)) + 1e-9) continue;
    ADD_FAILURE() << what << ": token " << i << " '" << ta[i] << "' vs '" << tb[i] << "'";
    ++reported;
  }
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

// Tensor parallelism: the TP group takes whole steps (its links are its own on dgx_h100) and
// its ranks time the collectives in between; --exact sends every kernel and collective.
TEST(Exact, TensorParallelStepLaunchesMatchKernelByKernel) {
  const fs::path base = fs::temp_directory_path() / ("ks_exact_tp_" + std::to_string(::getpid()));
  fs::remove_all(base);
  const std::string scenario = kSource + "/scenarios/quickstart.yaml --set workload.num_requests=300 "
                                         "--set parallel.tp=4 --set replicas=2";
  ASSERT_EQ(kernelsight("run " + scenario + " --out " + (base / "fast").string()), 0);
  ASSERT_EQ(kernelsight("run " + scenario + " --exact --out " + (base / "exact").string()), 0);
  EXPECT_EQ(read(base / "fast" / "kernels.csv"), read(base / "exact" / "kernels.csv"));
  for (const char* file : {"summary.json", "requests.csv"}) {
    std::string fast = read(base / "fast" / file), exact = read(base / "exact" / file);
    if (std::string(file) == "summary.json") {  // the fast run really launched whole steps
      EXPECT_GT(take_whole_step_launches(fast), 0);
      EXPECT_EQ(take_whole_step_launches(exact), 0);
    }
    expect_numerically_equal(fast, exact, 1e-6, file);
  }
  fs::remove_all(base);
}

// An engine profile's host (vllm: the `fitted` host with CUDA graphs) stays the host under --exact:
// launch_granularity, which --exact sets, does not turn the scenario's host into fixed_overhead.
TEST(Exact, EngineProfileScenarioKeepsItsHost) {
  expect_same_results("profile", kSource + "/scenarios/qwen3_30b_a3b_h100.yaml --set workload.num_requests=60");
  const fs::path base = fs::temp_directory_path() / ("ks_exact_profile_host_" + std::to_string(::getpid()));
  fs::remove_all(base);
  ASSERT_EQ(kernelsight("run " + kSource + "/scenarios/qwen3_30b_a3b_h100.yaml --set workload.num_requests=5 --exact "
                        "--out " + base.string()),
            0);
  const std::string resolved = read(base / "config.resolved.yaml");
  EXPECT_NE(resolved.find("kind: fitted"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("cuda_graphs: true"), std::string::npos) << resolved;
  fs::remove_all(base);
}

// The same with tensor parallelism (profile vllm, TP4): the TP tolerance.
TEST(Exact, EngineProfileTensorParallelMatches) {
  const fs::path base = fs::temp_directory_path() / ("ks_exact_profile_tp_" + std::to_string(::getpid()));
  fs::remove_all(base);
  const std::string scenario = kSource + "/scenarios/llama3_70b_tp4_h100.yaml --set workload.num_requests=60";
  ASSERT_EQ(kernelsight("run " + scenario + " --out " + (base / "fast").string()), 0);
  ASSERT_EQ(kernelsight("run " + scenario + " --exact --out " + (base / "exact").string()), 0);
  EXPECT_EQ(read(base / "fast" / "kernels.csv"), read(base / "exact" / "kernels.csv"));
  for (const char* file : {"summary.json", "requests.csv"}) {
    std::string fast = read(base / "fast" / file), exact = read(base / "exact" / file);
    if (std::string(file) == "summary.json") {
      EXPECT_GT(take_whole_step_launches(fast), 0);
      EXPECT_EQ(take_whole_step_launches(exact), 0);
    }
    expect_numerically_equal(fast, exact, 1e-6, file);
  }
  fs::remove_all(base);
}

// Pipeline parallelism, tp = 1: every stage's GPU takes whole steps, the sends between stages
// are the same fabric transactions either way. Zero tolerance.
TEST(Exact, PipelineStagesMatch) {
  expect_same_results("pp2", kSource + "/scenarios/quickstart.yaml --set workload.num_requests=200 "
                                       "--set parallel.pp=2");
}

// PP x TP: the sends share links with the stages' collectives, so the TP groups send their
// kernels one by one on both paths (no whole-step launches); only the memo differs.
TEST(Exact, PipelineWithTensorParallelMatches) {
  const fs::path base = fs::temp_directory_path() / ("ks_exact_pptp_" + std::to_string(::getpid()));
  fs::remove_all(base);
  const std::string scenario = kSource + "/scenarios/quickstart.yaml --set workload.num_requests=100 "
                                         "--set parallel.tp=2 --set parallel.pp=2";
  ASSERT_EQ(kernelsight("run " + scenario + " --out " + (base / "fast").string()), 0);
  ASSERT_EQ(kernelsight("run " + scenario + " --exact --out " + (base / "exact").string()), 0);
  for (const char* file : {"summary.json", "requests.csv", "kernels.csv"})
    EXPECT_EQ(read(base / "fast" / file), read(base / "exact" / file)) << file;
  fs::remove_all(base);
}
