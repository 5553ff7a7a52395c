// summary.json's utilisation and cost figures, on runs small enough to work out by hand.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

nlohmann::json run(const std::string& name, const std::string& sets) {
  const fs::path out = fs::temp_directory_path() / ("ks_util_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string cmd = std::string(KS_CLI) + " run " + KS_SOURCE_DIR + "/scenarios/quickstart.yaml -q -o " +
                          out.string() + " " + sets + " > /dev/null 2>&1";
  const int raw = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << cmd;
  std::ifstream in(out / "summary.json");
  return nlohmann::json::parse(in);
}

}  // namespace

// One request of 512 + 128 tokens: every batch holds it alone; at its last step it holds
// ceil(640 / block) blocks of the cache; one GPU at 3.6 per GPU-hour costs duration / 1000.
TEST(Utilization, OneRequestAloneOnOneGpu) {
  const nlohmann::json s = run("one", "--set workload.num_requests=1 --set output.price_per_gpu_hour=3.6");
  EXPECT_DOUBLE_EQ(s["mean_batch_size"].get<double>(), 1.0);
  const double blocks = s["kv_cache_blocks_per_replica"].get<double>();
  const double block_tokens = s["kv_cache_tokens_per_replica"].get<double>() / blocks;
  EXPECT_NEAR(s["peak_kv_cache_usage"].get<double>(), std::ceil(640.0 / block_tokens) / blocks, 1e-12);
  EXPECT_GT(s["mean_kv_cache_usage"].get<double>(), 0.0);
  EXPECT_LT(s["mean_kv_cache_usage"].get<double>(), s["peak_kv_cache_usage"].get<double>());
  // Busy most of the time (one request runs back to back) but never more than always.
  EXPECT_GT(s["gpu_utilization"].get<double>(), 0.5);
  EXPECT_LE(s["gpu_utilization"].get<double>(), 1.0);
  const double duration = s["duration_s"].get<double>();
  EXPECT_NEAR(s["cost"].get<double>(), duration / 1000.0, 1e-12);
  EXPECT_NEAR(s["cost_per_million_output_tokens"].get<double>(), duration / 1000.0 / (128 / 1e6), 1e-9);
  EXPECT_NEAR(s["cost_per_million_total_tokens"].get<double>(), duration / 1000.0 / (640 / 1e6), 1e-9);
}

// Two replicas cost twice the GPU-hours of the same run length; without a price no cost is given.
TEST(Utilization, CostCountsEveryGpuAndIsAbsentWithoutAPrice) {
  const nlohmann::json two = run("two", "--set workload.num_requests=20 --set replicas=2 --set output.price_per_gpu_hour=1");
  EXPECT_NEAR(two["cost"].get<double>(), 2 * two["duration_s"].get<double>() / 3600.0, 1e-12);
  const nlohmann::json none = run("none", "--set workload.num_requests=20");
  EXPECT_FALSE(none.contains("cost"));
  EXPECT_TRUE(none.contains("gpu_utilization"));
  // More requests at once than one: batches of more than one sequence on average.
  EXPECT_GT(none["mean_batch_size"].get<double>(), 1.0);
}
