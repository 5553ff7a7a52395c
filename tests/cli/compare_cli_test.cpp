// `kernelsight compare` (issue 20): a measured benchmark file beside the prediction, one row per
// metric both report, error = (predicted - measured) / measured. The measured files are the
// format examples in tests/cli/compare/ (made-up round numbers, not measurements), so every
// expected error below is computed by hand from them.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;
using ks::test_support::run_shell;

namespace {

const std::string kExamples = std::string(KS_SOURCE_DIR) + "/tests/cli/compare/";

// A hand-written summary.json in `kernelsight run`'s format (a prediction for the examples).
const char* kPredicted = R"({
  "completed": 1000, "duration_s": 120.0,
  "request_throughput": 8.4, "output_throughput": 972.8, "total_token_throughput": 5120.0,
  "mean_ttft_ms": 30.0, "median_ttft_ms": 15.0, "p99_ttft_ms": 50.0, "p90_ttft_ms": 45.0,
  "mean_tpot_ms": 11.0, "mean_itl_ms": 9.0, "mean_e2el_ms": 1365.0,
  "model": "llama-3-8b"
})";

struct Fixture {
  fs::path dir;
  Fixture() {
    dir = ks::test_support::fresh_temp_path("ks_compare_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
    std::ofstream(dir / "predicted.json") << kPredicted;
  }
  ~Fixture() { fs::remove_all(dir); }
  ks::test_support::CliResult run(const std::string& args) const {
    return run_shell("cd '" + dir.string() + "' && " + std::string(KS_CLI) + " " + args + " 2>&1");
  }
};

// The table's rows: metric -> {measured, predicted, error} as printed.
std::map<std::string, std::vector<std::string>> rows(const std::string& out) {
  std::map<std::string, std::vector<std::string>> table;
  std::istringstream in(out);
  std::string line;
  bool body = false;
  while (std::getline(in, line)) {
    if (line.rfind("metric ", 0) == 0) {
      body = true;
      continue;
    }
    if (!body || line.rfind("mean |error|", 0) == 0 || line.rfind("note: ", 0) == 0) continue;
    std::istringstream cols(line);
    std::string name, a, b, c;
    if (cols >> name >> a >> b >> c) table[name] = {a, b, c};
  }
  return table;
}

TEST(CompareCli, VllmBenchServeErrorsComputedByHand) {
  Fixture f;
  const auto r = f.run("compare --predicted predicted.json --measured " + kExamples + "vllm_bench_serve_format_example.json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(vllm bench serve)"), std::string::npos) << r.out;
  const auto t = rows(r.out);
  using Row = std::vector<std::string>;
  EXPECT_EQ(t.at("completed"), (Row{"1000.00", "1000.00", "+0.0%"}));
  EXPECT_EQ(t.at("duration"), (Row{"125.00", "120.00", "-4.0%"}));             // (120 - 125) / 125
  EXPECT_EQ(t.at("request_throughput"), (Row{"8.00", "8.40", "+5.0%"}));       // 0.4 / 8
  EXPECT_EQ(t.at("output_throughput"), (Row{"1024.00", "972.80", "-5.0%"}));  // -51.2 / 1024
  EXPECT_EQ(t.at("total_token_throughput"), (Row{"5120.00", "5120.00", "+0.0%"}));
  EXPECT_EQ(t.at("mean_ttft_ms"), (Row{"25.00", "30.00", "+20.0%"}));
  EXPECT_EQ(t.at("median_ttft_ms"), (Row{"20.00", "15.00", "-25.0%"}));
  EXPECT_EQ(t.at("p99_ttft_ms"), (Row{"50.00", "50.00", "+0.0%"}));
  EXPECT_EQ(t.at("mean_tpot_ms"), (Row{"10.00", "11.00", "+10.0%"}));
  EXPECT_EQ(t.at("mean_itl_ms"), (Row{"10.00", "9.00", "-10.0%"}));
  EXPECT_EQ(t.at("mean_e2el_ms"), (Row{"1300.00", "1365.00", "+5.0%"}));
  // Only metrics in both: p90 is not in the vLLM file, std not in the prediction.
  EXPECT_EQ(t.size(), 11u) << r.out;
  EXPECT_EQ(t.count("p90_ttft_ms"), 0u);
  EXPECT_EQ(t.count("std_ttft_ms"), 0u);
  // Mean |error| of the 9 latency and throughput rows: (5+5+0+20+25+0+10+10+5)/9 = 8.89.
  EXPECT_NE(r.out.find("mean |error| over 9 latency and throughput metrics: 8.9%"), std::string::npos) << r.out;
}

TEST(CompareCli, SglangJsonLinesLastRunByDefaultOrTheLineAsked) {
  Fixture f;
  const std::string file = kExamples + "sglang_bench_serving_format_example.jsonl";
  auto r = f.run("compare --predicted predicted.json --measured " + file);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(":2 (sglang bench_serving)"), std::string::npos) << r.out;
  auto t = rows(r.out);
  using Row = std::vector<std::string>;
  EXPECT_EQ(t.at("request_throughput"), (Row{"4.00", "8.40", "+110.0%"}));          // 4.4 / 4
  EXPECT_EQ(t.at("total_token_throughput"), (Row{"2560.00", "5120.00", "+100.0%"}));  // SGLang's total_throughput
  EXPECT_EQ(t.at("mean_e2el_ms"), (Row{"1000.00", "1365.00", "+36.5%"}));            // its mean_e2e_latency_ms
  EXPECT_EQ(t.at("mean_tpot_ms"), (Row{"7.50", "11.00", "+46.7%"}));                 // 3.5 / 7.5
  r = f.run("compare --predicted predicted.json --line 1 --measured " + file);
  ASSERT_EQ(r.status, 0) << r.out;
  t = rows(r.out);
  EXPECT_EQ(t.at("request_throughput"), (Row{"2.00", "8.40", "+320.0%"}));
  EXPECT_EQ(t.at("mean_ttft_ms"), (Row{"20.00", "30.00", "+50.0%"}));
}

// Python's json.dumps writes NaN for the std of no samples: no value, not an error.
TEST(CompareCli, PythonNanIsNoValue) {
  Fixture f;
  std::ofstream(f.dir / "m.json") << "{\"mean_ttft_ms\": 24.0, \"std_ttft_ms\": NaN, \"note\": \"NaN in text\"}\n";
  const auto r = f.run("compare --predicted predicted.json --measured m.json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto t = rows(r.out);
  EXPECT_EQ(t.size(), 1u) << r.out;
  EXPECT_EQ(t.at("mean_ttft_ms"), (std::vector<std::string>{"24.00", "30.00", "+25.0%"}));
}

// Simulating the scenario: the predicted column is what `run` writes to summary.json.
TEST(CompareCli, ScenarioIsSimulatedLikeRun) {
  Fixture f;
  std::ofstream(f.dir / "s.yaml") << "name: t\nmodel: {name: llama-3-8b}\nhardware:\n  gpu: {kind: catalog, spec: h100_sxm}\n"
                                     "workload: {kind: poisson, rate: 8/s, num_requests: 20, prompt_tokens: 128, "
                                     "output_tokens: 16}\n";
  const auto run = f.run("run s.yaml -q --out out");
  ASSERT_EQ(run.status, 0) << run.out;
  const nlohmann::json summary = nlohmann::json::parse(ks::test_support::read_text(f.dir / "out" / "summary.json"));
  const auto r = f.run("compare s.yaml --measured " + kExamples + "vllm_bench_serve_format_example.json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("predicted: s.yaml (scenario 't', simulated)"), std::string::npos) << r.out;
  const auto t = rows(r.out);
  for (const auto& [metric, measured] : std::map<std::string, double>{
           {"mean_ttft_ms", 25.0}, {"p99_tpot_ms", 14.0}, {"mean_e2el_ms", 1300.0}, {"request_throughput", 8.0}}) {
    const double predicted = summary.at(metric).get<double>();
    char p[32], e[32];
    std::snprintf(p, sizeof p, "%.2f", predicted);
    std::snprintf(e, sizeof e, "%+.1f%%", (predicted - measured) / measured * 100.0);
    EXPECT_EQ(t.at(metric).at(1), p) << metric;
    EXPECT_EQ(t.at(metric).at(2), e) << metric;
  }
  EXPECT_EQ(t.at("completed"), (std::vector<std::string>{"1000.00", "20.00", "-98.0%"}));
  EXPECT_NE(r.out.find("note: the measured run completed 1000 requests, the prediction 20"), std::string::npos) << r.out;
}

TEST(CompareCli, UsageErrors) {
  Fixture f;
  EXPECT_EQ(f.run("compare --predicted predicted.json").status, 2);  // no --measured
  const auto both = f.run("compare s.yaml --predicted predicted.json --measured predicted.json");
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.out.find("one of them"), std::string::npos) << both.out;
  const auto array = f.run("compare --predicted predicted.json --measured x.json");
  EXPECT_EQ(array.status, 2);
  EXPECT_NE(array.out.find("x.json: cannot read file"), std::string::npos) << array.out;
  std::ofstream(f.dir / "a.json") << "[1, 2]\n";
  const auto arr = f.run("compare --predicted predicted.json --measured a.json");
  EXPECT_EQ(arr.status, 2);
  EXPECT_NE(arr.out.find("a.json: neither a `vllm bench serve --save-result` JSON nor an SGLang"), std::string::npos)
      << arr.out;
  EXPECT_NE(arr.out.find("expected a JSON object, got an array"), std::string::npos) << arr.out;
}

}  // namespace
