// The scenario catalogue (scenarios/*.yaml) cannot rot: scenarios/README.md lists exactly its
// files with each file's one-line comment, and every scenario's short version runs through the
// CLI (its own process) to completion with sane metrics.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kScenarios = fs::path(KS_SOURCE_DIR) / "scenarios";
constexpr int kShortRequests = 30;

// The catalogue: the YAML files directly in scenarios/ (sub-folders hold data and other suites).
std::vector<std::string> scenario_files() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kScenarios))
    if (e.is_regular_file() && e.path().extension() == ".yaml") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// README rows "| [file.yaml](file.yaml) | description |" -> file -> description.
std::map<std::string, std::string> readme_rows() {
  std::map<std::string, std::string> rows;
  std::istringstream in(read(kScenarios / "README.md"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| [", 0) != 0) continue;
    const auto close = line.find(']');
    const auto cell = line.find(" | ", close);
    if (close == std::string::npos || cell == std::string::npos || line.size() < cell + 5) {
      ADD_FAILURE() << "malformed README row: " << line;
      continue;
    }
    const std::string desc = line.substr(cell + 3, line.size() - cell - 3 - 2);  // drop the final " |"
    EXPECT_TRUE(rows.emplace(line.substr(3, close - 3), desc).second) << "listed twice: " << line;
  }
  return rows;
}

}  // namespace

TEST(ScenarioCatalog, EveryFileOpensWithAOneLineCommentThatTheReadmeRepeats) {
  const auto files = scenario_files();
  ASSERT_GE(files.size(), 20u) << "the catalogue covers models x GPUs x workloads";
  const auto rows = readme_rows();
  for (const auto& f : files) {
    const std::string line = first_line(kScenarios / f);
    ASSERT_EQ(line.rfind("# ", 0), 0u) << f << " must start with a '# ' comment saying what it is";
    const auto it = rows.find(f);
    ASSERT_NE(it, rows.end()) << "scenarios/README.md does not list " << f;
    EXPECT_EQ(it->second, line.substr(2)) << "scenarios/README.md's line for " << f << " differs from its comment";
  }
  for (const auto& [f, desc] : rows)
    EXPECT_TRUE(std::binary_search(files.begin(), files.end(), f)) << "README lists " << f << ", which does not exist";
}

class ScenarioRun : public testing::TestWithParam<std::string> {};

TEST_P(ScenarioRun, ShortVersionCompletesWithSaneMetrics) {
  const std::string file = GetParam();
  const fs::path out = fs::temp_directory_path() / ("ks_scenario_" + file + "_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = ks::test_support::run_cli(KS_CLI, "run " + (kScenarios / file).string() + " -q --set workload.num_requests=" +
                                                       std::to_string(kShortRequests) + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(read(out / "summary.json"));
  EXPECT_EQ(j["submitted"].get<int>(), kShortRequests);
  EXPECT_EQ(j["completed"].get<int>(), kShortRequests) << "every request finishes";
  const std::string requests = read(out / "requests.csv");
  EXPECT_EQ(std::count(requests.begin(), requests.end(), '\n'), kShortRequests + 1);
  for (const char* key : {"duration_s", "mean_ttft_ms", "p99_ttft_ms", "mean_e2el_ms", "request_throughput",
                          "output_throughput", "total_token_throughput"})
    EXPECT_GT(j[key].get<double>(), 0) << key;
  EXPECT_GE(j["mean_tpot_ms"].get<double>(), 0);
  EXPECT_LE(j["mean_ttft_ms"].get<double>(), j["mean_e2el_ms"].get<double>());
  EXPECT_LE(j["median_ttft_ms"].get<double>(), j["p99_ttft_ms"].get<double>());
  EXPECT_GT(read(out / "kernels.csv").size(), 100u);
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(ScenarioCatalog, ScenarioRun, testing::ValuesIn(scenario_files()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);  // no ".yaml"
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });
