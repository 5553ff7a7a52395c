// An interrupted run (SIGINT / SIGTERM): it stops at a step boundary, writes complete result
// files marked partial, and exits with 128 + the signal number.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Starts a run far too long to finish (a million requests), lets it simulate for a while, sends
// `sig`, and returns the exit status (-1 if it did not exit normally) and its stderr.
std::pair<int, std::string> interrupted_run(int sig, const fs::path& out) {
  fs::remove_all(out);
  fs::create_directories(out);
  const std::string err = (out / "stderr.txt").string();
  std::vector<std::string> args = {KS_CLI, "run", std::string(KS_SOURCE_DIR) + "/scenarios/quickstart.yaml",
                                   "-q", "--set", "workload.num_requests=1000000", "--set", "workload.rate=50/s",
                                   "--out", out.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);  // not ignored, whatever the test runner does
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &files, &attr, argv.data(), environ) != 0) return {-2, "spawn failed"};
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  // Wait until it simulates (the progress of a run is not visible from outside: give it time).
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  kill(pid, sig);
  int raw = 0;
  waitpid(pid, &raw, 0);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read(err)};
}

void expect_partial_results(const fs::path& out, const std::string& err, const char* name) {
  EXPECT_NE(err.find(std::string("interrupted by ") + name), std::string::npos) << err;
  EXPECT_NE(err.find("PARTIAL results"), std::string::npos) << err;
  const auto summary = nlohmann::json::parse(read(out / "summary.json"));  // complete JSON, or the test fails
  EXPECT_EQ(summary["partial"], true);
  const double until = summary["simulated_until_s"].get<double>();
  EXPECT_GT(until, 0.0);
  EXPECT_LT(until, 1e6 / 50.0);  // far from the end of the workload
  EXPECT_LT(summary["completed"].get<int>(), 1000000);
  // requests.csv: a header and whole rows (every row ends with a newline and has every column).
  const std::string csv = read(out / "requests.csv");
  ASSERT_FALSE(csv.empty());
  EXPECT_EQ(csv.back(), '\n');
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  const auto columns = std::count(line.begin(), line.end(), ',');
  int rows = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), columns) << line;
    ++rows;
  }
  EXPECT_EQ(rows, summary["submitted"].get<int>());
  EXPECT_TRUE(fs::exists(out / "kernels.csv"));
  EXPECT_TRUE(fs::exists(out / "config.resolved.yaml"));
  for (const auto& entry : fs::directory_iterator(out))  // no temporary left behind
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST(Interrupt, SigintStopsTheRunAndWritesPartialResults) {
  const fs::path out = fs::temp_directory_path() / ("ks_interrupt_int_" + std::to_string(::getpid()));
  const auto [status, err] = interrupted_run(SIGINT, out);
  EXPECT_EQ(status, 130) << err;
  expect_partial_results(out, err, "SIGINT");
  fs::remove_all(out);
}

TEST(Interrupt, SigtermStopsTheRunAndWritesPartialResults) {
  const fs::path out = fs::temp_directory_path() / ("ks_interrupt_term_" + std::to_string(::getpid()));
  const auto [status, err] = interrupted_run(SIGTERM, out);
  EXPECT_EQ(status, 143) << err;
  expect_partial_results(out, err, "SIGTERM");
  fs::remove_all(out);
}

}  // namespace
