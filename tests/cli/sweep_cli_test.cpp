// `kernelsight sweep` and `merge` (with a Slurm array run by hand) as a user runs them
// (`capacity`: capacity_cli_test.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;

namespace {

using Result = ks::test_support::CliResult;

Result kernelsight(const std::string& args) { return ks::test_support::run_cli(KS_CLI, args); }

std::string read(const fs::path& p) { return ks::test_support::read_text(p); }

fs::path temp_dir(const std::string& name) {
  const fs::path d = ks::test_support::fresh_temp_path("ks_sweep_test_", name);
  fs::create_directories(d);
  return d;
}

const std::string kQuickstart = std::string(KS_SOURCE_DIR) + "/scenarios/quickstart.yaml";

// A 2 x 2 grid over the quickstart scenario, short runs.
std::string grid_sweep() {
  return "base: " + kQuickstart +
         "\nset: {workload.num_requests: 60}\n"
         "grid:\n"
         "  workload.rate: [4/s, 16/s]\n"
         "  workload.output_tokens: [32, 64]\n";
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::size_t begin = 0;
    while (true) {
      const std::size_t comma = line.find(',', begin);
      cells.push_back(line.substr(begin, comma - begin));
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    rows.push_back(cells);
  }
  return rows;
}

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

nlohmann::json summary(const fs::path& dir) { return nlohmann::json::parse(read(dir / "summary.json")); }

}  // namespace

TEST(Sweep, GridRunsTheCartesianProductAndMergesEverySummaryIntoSweepCsv) {
  const fs::path dir = temp_dir("grid");
  std::ofstream(dir / "grid.yaml") << grid_sweep();
  const Result r = kernelsight("sweep " + (dir / "grid.yaml").string() + " -j 2 --out " + (dir / "out").string());
  ASSERT_EQ(r.status, 0) << r.out;

  const auto rows = csv_rows(read(dir / "out" / "sweep.csv"));
  ASSERT_EQ(rows.size(), 5u);
  const auto& header = rows[0];
  ASSERT_GE(header.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(header.begin(), header.begin() + 4),
            (std::vector<std::string>{"point", "status", "workload.rate", "workload.output_tokens"}));
  EXPECT_TRUE(std::is_sorted(header.begin() + 4, header.end()));
  // File order, the last key varying fastest; values as written.
  const std::vector<std::pair<std::string, std::string>> expected = {{"4/s", "32"}, {"4/s", "64"}, {"16/s", "32"}, {"16/s", "64"}};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& row = rows[i + 1];
    ASSERT_EQ(row.size(), header.size());
    EXPECT_EQ(row[0], std::to_string(i));
    EXPECT_EQ(row[1], "ok");
    EXPECT_EQ(row[2], expected[i].first);
    EXPECT_EQ(row[3], expected[i].second);
    // Every point is the run a user gets with the same overrides.
    const fs::path own = dir / ("run" + std::to_string(i));
    const Result run = kernelsight("run " + kQuickstart + " -q --set workload.num_requests=60 --set workload.rate=" +
                                   expected[i].first + " --set workload.output_tokens=" + expected[i].second + " --out " +
                                   own.string());
    ASSERT_EQ(run.status, 0) << run.out;
    const fs::path point = dir / "out" / "points" / ("000" + std::to_string(i));
    EXPECT_EQ(read(point / "summary.json"), read(own / "summary.json"));
    const auto s = summary(own);
    EXPECT_EQ(row[column(header, "completed")], "60");
    EXPECT_EQ(std::stod(row[column(header, "p99_ttft_ms")]), s["p99_ttft_ms"].get<double>());
    EXPECT_EQ(row[column(header, "total_output_tokens")], std::to_string(60 * std::stoi(expected[i].second)));
    EXPECT_EQ(row[column(header, "model")], "llama-3-8b");
    const std::string overrides = read(point / "overrides.yaml");
    EXPECT_NE(overrides.find("workload.rate: " + expected[i].first + "\n"), std::string::npos) << overrides;
    EXPECT_NE(overrides.find("workload.num_requests: 60\n"), std::string::npos) << overrides;
  }
}

TEST(Sweep, AFailedPointIsRecordedWithoutStoppingTheOthers) {
  const fs::path dir = temp_dir("fail");
  // Point 1 passes every check but cannot run: its prompt needs more KV blocks than one GPU has.
  std::ofstream(dir / "list.yaml") << "name: listed\nbase: " + kQuickstart +
                                          "\nset: {workload.num_requests: 20}\n"
                                          "points:\n"
                                          "  - {workload.rate: 4/s}\n"
                                          "  - {workload.prompt_tokens: 600000}\n"
                                          "  - {workload.rate: 8/s, workload.output_tokens: 16}\n";
  const Result r = kernelsight("sweep " + (dir / "list.yaml").string() + " -j 2 --out " + (dir / "out").string());
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("KV blocks"), std::string::npos) << r.out;
  const auto rows = csv_rows(read(dir / "out" / "sweep.csv"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(rows[0].begin(), rows[0].begin() + 5),
            (std::vector<std::string>{"point", "status", "workload.rate", "workload.prompt_tokens", "workload.output_tokens"}));
  EXPECT_EQ(std::vector<std::string>(rows[1].begin(), rows[1].begin() + 5), (std::vector<std::string>{"0", "ok", "4/s", "", ""}));
  EXPECT_EQ(std::vector<std::string>(rows[3].begin(), rows[3].begin() + 5), (std::vector<std::string>{"2", "ok", "8/s", "", "16"}));
  EXPECT_EQ(rows[2][1], "failed");
  for (std::size_t c = 5; c < rows[2].size(); ++c) EXPECT_EQ(rows[2][c], "") << rows[0][c];
  EXPECT_EQ(rows[3][column(rows[0], "total_output_tokens")], "320");
  const auto status = nlohmann::json::parse(read(dir / "out" / "points" / "0001" / "status.json"));
  EXPECT_EQ(status["status"], "failed");
  EXPECT_NE(status["error"].get<std::string>().find("KV blocks"), std::string::npos) << status;
  EXPECT_FALSE(fs::exists(dir / "out" / "points" / "0001" / "summary.json"));
}

TEST(Sweep, TheSameSweepGivesTheSameCsvWhateverTheParallelism) {
  const fs::path dir = temp_dir("jobs");
  std::ofstream(dir / "grid.yaml") << grid_sweep();
  const Result one = kernelsight("sweep " + (dir / "grid.yaml").string() + " -j 1 --out " + (dir / "one").string());
  ASSERT_EQ(one.status, 0) << one.out;
  const Result two = kernelsight("sweep " + (dir / "grid.yaml").string() + " -j 2 --out " + (dir / "two").string());
  ASSERT_EQ(two.status, 0) << two.out;
  const std::string csv = read(dir / "one" / "sweep.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  EXPECT_EQ(csv, read(dir / "two" / "sweep.csv"));
}

TEST(Sweep, ASlurmArrayRunByHandThenMergedEqualsTheLocalSweep) {
  const fs::path dir = temp_dir("slurm");
  std::ofstream(dir / "grid.yaml") << grid_sweep();
  const fs::path array = dir / "array";
  const Result emit = kernelsight("sweep " + (dir / "grid.yaml").string() + " --emit slurm --out " + array.string());
  ASSERT_EQ(emit.status, 0) << emit.out;
  const std::string script = read(array / "sweep.slurm");
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(script.find("\n#SBATCH --array=0-3\n"), std::string::npos) << script;
  EXPECT_NE(script.find(KS_CLI), std::string::npos) << script;
  EXPECT_FALSE(fs::exists(array / "points" / "0000" / "summary.json"));  // emitted, not run

  // Nothing has run: merge reports every point missing.
  const Result early = kernelsight("merge " + array.string());
  EXPECT_NE(early.status, 0) << early.out;
  EXPECT_NE(early.out.find("4 missing"), std::string::npos) << early.out;

  // As Slurm would: each array task runs the script with its SLURM_ARRAY_TASK_ID.
  for (int task = 3; task >= 0; --task) {
    const Result t = ks::test_support::run_shell("SLURM_ARRAY_TASK_ID=" + std::to_string(task) + " bash " +
                                                 (array / "sweep.slurm").string() + " 2>&1");
    ASSERT_EQ(t.status, 0) << t.out;
    if (task == 2) {
      const Result partial = kernelsight("merge " + array.string());
      EXPECT_NE(partial.status, 0);
      EXPECT_NE(partial.out.find("2 missing"), std::string::npos) << partial.out;
    }
  }
  const Result merged = kernelsight("merge " + array.string());
  ASSERT_EQ(merged.status, 0) << merged.out;

  const Result local = kernelsight("sweep " + (dir / "grid.yaml").string() + " -j 2 --out " + (dir / "local").string());
  ASSERT_EQ(local.status, 0) << local.out;
  EXPECT_EQ(read(array / "sweep.csv"), read(dir / "local" / "sweep.csv"));
}

TEST(Sweep, BadSweepFilesAreRejectedBeforeAnythingRuns) {
  const fs::path dir = temp_dir("bad");
  const fs::path out = dir / "out";
  auto sweep = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return kernelsight("sweep " + (dir / name).string() + " --out " + out.string());
  };
  Result r = sweep("top.yaml", "base: " + kQuickstart + "\ngrids: {workload.rate: [1/s]}\n");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("top.yaml:2:1: key 'grids': unknown sweep key (did you mean 'grid'?"), std::string::npos) << r.out;

  // The second value is bad, the first fine: still nothing runs.
  r = sweep("value.yaml", "base: " + kQuickstart + "\ngrid:\n  workload.rate: [4/s, fast]\n");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("value.yaml:3:24: --set workload.rate=fast: key 'workload.rate': expected a rate"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(point 1)"), std::string::npos) << r.out;

  r = sweep("key.yaml", "base: " + kQuickstart + "\npoints:\n  - {engine.max_num_seq: 64}\n");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("key.yaml:3:26: --set engine.max_num_seq=64: key 'engine.max_num_seq': unknown key (did you mean "
                       "'max_num_seqs'?"),
            std::string::npos)
      << r.out;

  r = sweep("base.yaml", "base: missing.yaml\ngrid: {seed: [1]}\n");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("base.yaml:1:7: key 'base': no scenario file"), std::string::npos) << r.out;

  r = sweep("empty.yaml", "base: " + kQuickstart + "\ngrid: {seed: []}\n");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("key 'grid.seed': expected a non-empty list"), std::string::npos) << r.out;

  r = sweep("both.yaml", "base: " + kQuickstart + "\ngrid: {seed: [1]}\npoints: [{seed: 2}]\n");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("give either `grid` or `points`"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Sweep, PluginsGivenToTheSweepReachEveryPoint) {
  const fs::path dir = temp_dir("plugin");
  std::ofstream(dir / "plug.yaml") << "base: " + kQuickstart +
                                          "\nset: {workload.num_requests: 30}\n"
                                          "grid: {hardware.gpu.kind: [hbm_module_gpu], workload.rate: [2/s, 4/s]}\n";
  const Result without = kernelsight("sweep " + (dir / "plug.yaml").string() + " --out " + (dir / "without").string());
  EXPECT_EQ(without.status, 2) << without.out;
  EXPECT_NE(without.out.find("hbm_module_gpu"), std::string::npos) << without.out;
  const Result with = kernelsight("sweep " + (dir / "plug.yaml").string() + " --plugin " + KS_PLUGIN + " --out " +
                                  (dir / "with").string());
  ASSERT_EQ(with.status, 0) << with.out;
  const auto rows = csv_rows(read(dir / "with" / "sweep.csv"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][1], "ok");
  EXPECT_EQ(rows[2][1], "ok");
}

// The shipped example sweeps stay valid: every point passes the checks (emitted, not run).
TEST(Sweep, TheExampleSweepFilesCheckClean) {
  const fs::path dir = temp_dir("examples");
  for (const auto& entry : fs::directory_iterator(std::string(KS_SOURCE_DIR) + "/scenarios/sweeps")) {
    const std::string text = read(entry.path());
    if (text.find("\nbase:") == std::string::npos && text.rfind("base:", 0) != 0) continue;  // a base scenario
    const Result r = kernelsight("sweep " + entry.path().string() + " --emit slurm --out " +
                                 (dir / entry.path().stem()).string());
    EXPECT_EQ(r.status, 0) << entry.path() << "\n" << r.out;
    EXPECT_TRUE(fs::exists(dir / entry.path().stem() / "sweep.slurm")) << entry.path();
  }
}
