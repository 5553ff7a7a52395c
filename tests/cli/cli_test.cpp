// The kernelsight binary as a user runs it: exit codes, messages, outputs, determinism.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Result {
  int status;
  std::string out;  // stdout and stderr together
};

Result kernelsight(const std::string& args) {
  const std::string cmd = std::string(KS_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("ks_cli_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

const std::string kQuickstart = std::string(KS_SOURCE_DIR) + "/scenarios/quickstart.yaml";

}  // namespace

TEST(Cli, RunWritesSummaryWithTheVllmBenchKeysDeterministically) {
  const fs::path a = temp_dir("a"), b = temp_dir("b");
  const std::string set = " --set workload.num_requests=300 --set workload.rate=6/s";
  const Result ra = kernelsight("run " + kQuickstart + set + " --out " + a.string());
  ASSERT_EQ(ra.status, 0) << ra.out;
  EXPECT_NE(ra.out.find("============ Serving Benchmark Result ============"), std::string::npos);
  EXPECT_NE(ra.out.find("Successful requests:                     300"), std::string::npos) << ra.out;
  const Result rb = kernelsight("run " + kQuickstart + set + " -q --out " + b.string());
  ASSERT_EQ(rb.status, 0) << rb.out;

  const std::string sa = read(a / "summary.json");
  EXPECT_EQ(sa, read(b / "summary.json"));  // same scenario + seed: byte-identical
  const std::string requests = read(a / "requests.csv");
  EXPECT_EQ(requests, read(b / "requests.csv"));
  EXPECT_EQ(read(a / "kernels.csv"), read(b / "kernels.csv"));
  EXPECT_EQ(std::count(requests.begin(), requests.end(), '\n'), 301);  // header + one row per request
  EXPECT_EQ(requests.rfind("id,replica,arrival_s,", 0), 0u) << requests.substr(0, 200);
  EXPECT_NE(read(a / "kernels.csv").find("\nqkv_proj,gemm,decode,"), std::string::npos);
  const auto j = nlohmann::json::parse(sa);
  for (const char* key : {"completed", "duration_s", "request_throughput", "output_throughput",
                          "total_token_throughput"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* stat : {"mean", "median", "p99"})
    for (const char* m : {"ttft", "tpot", "itl", "e2el"})
      EXPECT_TRUE(j.contains(std::string(stat) + "_" + m + "_ms")) << stat << "_" << m;
  EXPECT_EQ(j["completed"], 300);

  // The resolved configuration records the overrides and the defaults that were used.
  const std::string resolved = read(a / "config.resolved.yaml");
  EXPECT_NE(resolved.find("num_requests: 300"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("launch_overhead:"), std::string::npos) << resolved;

  // Another seed gives other arrivals.
  const fs::path c = temp_dir("c");
  ASSERT_EQ(kernelsight("run " + kQuickstart + set + " --set seed=7 -q --out " + c.string()).status, 0);
  EXPECT_NE(sa, read(c / "summary.json"));
  fs::remove_all(a), fs::remove_all(b), fs::remove_all(c);
}

TEST(Cli, GoodputCountsTheRequestsWithinTheSlos) {
  const fs::path a = temp_dir("slo");
  const std::string base = "run " + kQuickstart + " --set workload.num_requests=100 -q --out " + a.string();
  ASSERT_EQ(kernelsight(base + " --slo ttft=10s,tpot=1s").status, 0);
  auto j = nlohmann::json::parse(read(a / "summary.json"));
  EXPECT_EQ(j["good_requests"], 100);  // generous limits: all good
  EXPECT_DOUBLE_EQ(j["request_goodput"].get<double>(), j["request_throughput"].get<double>());
  ASSERT_EQ(kernelsight(base + " --slo tpot=0.001").status, 0);  // 1 us per token: none
  j = nlohmann::json::parse(read(a / "summary.json"));
  EXPECT_EQ(j["good_requests"], 0);
  EXPECT_EQ(kernelsight(base + " --slo latency=3ms").status, 2);
  fs::remove_all(a);
}

TEST(Cli, PrefixCachingCutsTtftOnASharedPrefixWorkload) {
  const fs::path on = temp_dir("pc_on"), off = temp_dir("pc_off");
  const std::string base = "run " + std::string(KS_SOURCE_DIR) + "/scenarios/shared_prefix.yaml -q --set workload.num_requests=200";
  ASSERT_EQ(kernelsight(base + " --out " + on.string()).status, 0);
  ASSERT_EQ(kernelsight(base + " --set cache.enable_prefix_caching=false --out " + off.string()).status, 0);
  const auto a = nlohmann::json::parse(read(on / "summary.json")), b = nlohmann::json::parse(read(off / "summary.json"));
  EXPECT_EQ(a["completed"], 200);
  EXPECT_EQ(b["completed"], 200);
  EXPECT_GT(a["prefix_cache_hit_rate"].get<double>(), 0.5);
  EXPECT_EQ(b["prefix_cache_hit_rate"].get<double>(), 0.0);
  EXPECT_LT(a["mean_ttft_ms"].get<double>(), 0.5 * b["mean_ttft_ms"].get<double>());
  EXPECT_EQ(a["total_input_tokens"], b["total_input_tokens"]);  // the same requests
  fs::remove_all(on), fs::remove_all(off);
}

TEST(Cli, AMisspeltKeyExitsTwoNamingTheKeyAndLine) {
  const fs::path dir = temp_dir("typo");
  fs::create_directories(dir);
  std::string yaml = read(kQuickstart);
  const auto pos = yaml.find("  num_requests:");
  ASSERT_NE(pos, std::string::npos);
  yaml.replace(pos, 15, "  num_reqests:");
  const int line = 1 + static_cast<int>(std::count(yaml.begin(), yaml.begin() + static_cast<long>(pos), '\n'));
  std::ofstream(dir / "typo.yaml") << yaml;
  const Result r = kernelsight("run " + (dir / "typo.yaml").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("typo.yaml:" + std::to_string(line) + ":"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("workload.num_reqests"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'num_requests'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "out" / "summary.json"));
  fs::remove_all(dir);
}

TEST(Cli, BadOverridesUnitsAndKindsExitTwo) {
  Result r = kernelsight("run " + kQuickstart + " --set workload.rate=fast");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--set workload.rate=fast"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rate"), std::string::npos) << r.out;

  r = kernelsight("run " + kQuickstart + " --set hardware.gpu.kind=quantum");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown gpu kind 'quantum'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("catalog"), std::string::npos) << r.out;

  r = kernelsight("run " + kQuickstart + " --set model.name=gpt-9");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("llama-3-8b"), std::string::npos) << r.out;  // lists the known models

  r = kernelsight("run /nonexistent/scenario.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("/nonexistent/scenario.yaml"), std::string::npos) << r.out;

  r = kernelsight("run " + kQuickstart + " --set model.name=llama-2-70b");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("does not fit"), std::string::npos) << r.out;
}

TEST(Cli, ListDescribeAndHelp) {
  Result r = kernelsight("list");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* s : {"gpu:", "catalog", "host:", "fixed_overhead", "scheduler:", "vllm_v1", "workload:",
                        "poisson", "router:", "round_robin", "h100_sxm", "llama-3-8b"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;

  r = kernelsight("describe poisson");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rate"), std::string::npos);
  EXPECT_NE(r.out.find("required"), std::string::npos);
  EXPECT_NE(r.out.find("default: 1000"), std::string::npos) << r.out;

  r = kernelsight("describe gpu.catalog");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("kernel_overhead"), std::string::npos);
  EXPECT_NE(r.out.find("time"), std::string::npos);

  EXPECT_EQ(kernelsight("describe warp_drive").status, 2);
  EXPECT_EQ(kernelsight("frobnicate").status, 2);
  for (const char* cmd : {"--help", "run --help", "list --help", "describe --help"}) {
    r = kernelsight(cmd);
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("kernelsight"), std::string::npos) << cmd;
  }
}

// Hypothetical hardware and user models: overrides over a catalog GPU, a spec file, a config.json.
TEST(Cli, GpuOverridesSpecFilesAndHfConfigs) {
  const std::string set = " --set workload.num_requests=100 -q";
  auto tpot = [](const fs::path& dir) {
    return nlohmann::json::parse(read(dir / "summary.json"))["mean_tpot_ms"].get<double>();
  };
  const fs::path base = temp_dir("base"), fast = temp_dir("fast"), file = temp_dir("file");
  ASSERT_EQ(kernelsight("run " + kQuickstart + set + " --out " + base.string()).status, 0);
  // Decode is memory-bound: twice the HBM bandwidth must cut TPOT clearly.
  Result r = kernelsight("run " + kQuickstart + set + " --set hardware.gpu.hbm_bandwidth=6.7TB/s --out " +
                         fast.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_LT(tpot(fast), 0.8 * tpot(base));
  r = kernelsight("run " + kQuickstart + set + " --set hardware.gpu.spec_file=" + std::string(KS_SOURCE_DIR) +
                  "/data/gpus/h100_sxm.yaml --out " + file.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read(base / "summary.json"), read(file / "summary.json"));  // same numbers as the catalog

  r = kernelsight("run " + kQuickstart + set + " --set hardware.gpu.peak_bf16=fast");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("hardware.gpu.peak_bf16"), std::string::npos) << r.out;

  const fs::path phi = temp_dir("phi");
  r = kernelsight("run " + kQuickstart + set + " --set model.config=" + std::string(KS_SOURCE_DIR) +
                  "/data/models/phi-2.json --out " + phi.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(read(phi / "summary.json"))["model"], "phi-2");
  r = kernelsight("run " + kQuickstart + set + " --set model.config=/nonexistent/config.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("model.config"), std::string::npos) << r.out;
  for (const auto& d : {base, fast, file, phi}) fs::remove_all(d);
}
