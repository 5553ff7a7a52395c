// `kernelsight step` (every kernel of one step, priced) and `kernelsight describe --all` as a
// user runs them.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.hpp"

namespace {

using Result = ks::test_support::CliResult;

Result kernelsight(const std::string& args) { return ks::test_support::run_cli(KS_CLI, args); }
// stdout only: the summary line goes to stderr.
Result csv_of(const std::string& args) {
  return ks::test_support::run_shell(std::string(KS_CLI) + " " + args + " 2>/dev/null");
}

using Row = std::map<std::string, std::string>;

std::vector<Row> parse(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::istringstream h(line); std::getline(h, line, ',');) header.push_back(line);
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    Row row;
    std::istringstream cells(line);
    std::string cell;
    for (const auto& name : header) {
      std::getline(cells, cell, ',');
      row[name] = cell;
    }
    rows.push_back(row);
  }
  return rows;
}

double num(const Row& r, const std::string& key) { return std::stod(r.at(key)); }

}  // namespace

TEST(StepCli, ListsEveryKernelOfADecodeStepWithItsLaunchesAndRoofs) {
  const Result r = csv_of("step --model llama-3-8b --gpu h100_sxm --tier roofline --decode 64 --context 1024");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto rows = parse(r.out);
  ASSERT_FALSE(rows.empty()) << r.out;
  double share = 0;
  std::set<std::string> names;
  for (const Row& row : rows) {
    names.insert(row.at("kernel"));
    share += num(row, "share");
    EXPECT_EQ(row.at("phase"), "decode") << row.at("kernel");  // a batch of decodes only
    // Llama-3-8B has 32 layers (its config.json); pre/post kernels run once.
    EXPECT_EQ(row.at("count"), row.at("section") == "layer" ? "32" : "1") << row.at("kernel");
    EXPECT_EQ(row.at("hbm_gbps"), "3350.00");  // H100 SXM datasheet: 3.35 TB/s
    // Roofline tier: time = max(flops / peak, bytes / bandwidth) + 2 us launch, from the row itself.
    const double roof = std::max(num(row, "flops") / (num(row, "peak_tflops") * 1e12),
                                 num(row, "bytes") / (num(row, "hbm_gbps") * 1e9)) * 1e6 + 2.0;
    EXPECT_NEAR(num(row, "predicted_us"), roof, 1e-3 * roof) << row.at("kernel");
    EXPECT_NEAR(num(row, "total_us"), num(row, "predicted_us") * num(row, "count"), 1e-3 * num(row, "total_us"));
  }
  EXPECT_NEAR(share, 1.0, 1e-3);
  for (const char* k : {"embedding", "qkv_proj", "attention_decode", "o_proj", "gate_up_proj", "down_proj", "lm_head"})
    EXPECT_TRUE(names.count(k)) << k;
  // A decode GEMM at batch 64: 2*m*n*k FLOPs (gate_up: n = 2 x 14336, k = 4096).
  for (const Row& row : rows) {
    if (row.at("kernel") == "gate_up_proj") {
      EXPECT_NEAR(num(row, "flops"), 2.0 * 64 * 28672 * 4096, 1e-6 * num(row, "flops"));  // 7 digits printed
    }
  }
}

TEST(StepCli, TensorParallelStepsPriceTheirAllReducesOnTheTopology) {
  const Result r = csv_of("step --model llama-3-70b --gpu h100_sxm --tp 4 --decode 8 --context 512 --prefill 256");
  ASSERT_EQ(r.status, 0) << r.out;
  int all_reduces = 0;
  for (const Row& row : parse(r.out)) {
    if (row.at("op") != "all_reduce") continue;
    ++all_reduces;
    EXPECT_EQ(row.at("bound"), "communication");
    EXPECT_GT(num(row, "predicted_us"), 0);
    EXPECT_EQ(row.at("intensity"), "");  // no roofline position
  }
  EXPECT_GE(all_reduces, 2);  // after attention and after the MLP of every layer
}

TEST(StepCli, AHypotheticalGpuFromASpecFileOrOverridesIsFaster) {
  const std::string step = "step --model llama-3-8b --tier roofline --decode 64 --context 1024 --gpu ";
  auto total = [](const std::string& csv) {
    double t = 0;
    for (const Row& row : parse(csv)) t += num(row, "total_us");
    return t;
  };
  const Result h100 = csv_of(step + "h100_sxm");
  const Result faster = csv_of(step + "h100_sxm --set hbm_bandwidth=6.7TB/s");
  const Result file = csv_of(step + std::string(KS_SOURCE_DIR) + "/scenarios/gpus/hx200.yaml");
  ASSERT_EQ(h100.status, 0) << h100.out;
  ASSERT_EQ(faster.status, 0) << faster.out;
  ASSERT_EQ(file.status, 0) << file.out;
  EXPECT_EQ(parse(faster.out).front().at("hbm_gbps"), "6700.00");
  EXPECT_LT(total(faster.out), 0.75 * total(h100.out));  // a memory-bound decode step
  EXPECT_LT(total(file.out), 0.75 * total(h100.out));
}

TEST(StepCli, BadInputExitsTwoAndSaysWhy) {
  const std::string base = "step --decode 4 --context 128 ";
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--model nope --gpu h100_sxm", "unknown model 'nope'"},
           {"--model llama-3-8b --gpu h900", "unknown GPU 'h900'"},
           {"--model llama-3-8b --gpu h100_sxm --set hbm_bandwidth=6TB", "hbm_bandwidth"},
           {"--model llama-3-8b --gpu a100_sxm_80gb --dtype fp8", "fp8"},
           {"--model llama-3-8b --gpu h100_sxm --dtype fp4", "does not support fp4"},
           {"--model llama-3-8b --gpu b200 --kv-dtype fp4", "not a KV-cache dtype"},
           {"--model llama-3-8b --gpu b200 --dtype fp5", "expected fp32, fp16, bf16, fp8, int8, int4 or fp4"},
           {"--model llama-3-8b --gpu h100_sxm --tier magic", "--tier"},
           {"--model llama-3-8b --gpu /nonexistent/gpu.yaml", "/nonexistent/gpu.yaml"}}) {
    const Result r = kernelsight(base + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << args << ": " << r.out;
  }
  const Result empty = kernelsight("step --model llama-3-8b --gpu h100_sxm");
  EXPECT_EQ(empty.status, 2);
  EXPECT_NE(empty.out.find("empty step"), std::string::npos) << empty.out;
}

TEST(DescribeCli, AllDocumentsEverySectionAndEveryRegisteredKind) {
  const Result md = kernelsight("describe --all --markdown");
  ASSERT_EQ(md.status, 0) << md.out;
  const Result list = kernelsight("list");
  ASSERT_EQ(list.status, 0);
  // Every kind `list` shows (indented lines before "models:") has its own heading.
  std::istringstream in(list.out.substr(0, list.out.find("models:")));
  std::string line;
  int kinds = 0;
  while (std::getline(in, line)) {
    if (line.rfind("  ", 0) != 0) continue;
    const std::string kind = line.substr(2, line.find(' ', 2) - 2);
    EXPECT_NE(md.out.find("#### `" + kind + "`"), std::string::npos) << kind;
    ++kinds;
  }
  EXPECT_GE(kinds, 10);
  for (const char* s : {"### `model:`", "### `parallel:`", "### `cache:`", "| `hardware.gpu:` |", "| `workload:` |",
                        "| `rate` | rate (e.g. 8/s) > 0 | **required** |"})
    EXPECT_NE(md.out.find(s), std::string::npos) << s;
  const Result text = kernelsight("describe --all");
  ASSERT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("workload.poisson: "), std::string::npos);
  EXPECT_EQ(kernelsight("describe --markdown").status, 2);
  EXPECT_EQ(kernelsight("describe --all poisson").status, 2);
}
