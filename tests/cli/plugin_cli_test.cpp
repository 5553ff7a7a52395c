// External plug-ins: a shared library registers a GPU kind whose HBM is its own SystemC module.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;
using ks::test_support::CliResult;

namespace {
CliResult kernelsight(const std::string& args) { return ks::test_support::run_cli(KS_CLI, args); }
const std::string kPlugin = std::string(" --plugin ") + KS_PLUGIN;
const std::string kQuickstart = std::string(KS_SOURCE_DIR) + "/scenarios/quickstart.yaml";

nlohmann::json run_summary(const std::string& args, const fs::path& out) {
  const CliResult r = kernelsight("run " + kQuickstart + " -q --set workload.num_requests=200 --out " +
                                  out.string() + " " + args);
  EXPECT_EQ(r.status, 0) << r.out;
  std::ifstream in(out / "summary.json");
  return nlohmann::json::parse(in);
}
}  // namespace

TEST(Plugin, RegistersItsKindForListDescribeAndRun) {
  CliResult r = kernelsight("list" + kPlugin);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("hbm_module_gpu"), std::string::npos) << r.out;
  r = kernelsight("describe hbm_module_gpu" + kPlugin);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("bandwidth_fraction"), std::string::npos) << r.out;
  // Without the plug-in the kind does not exist.
  EXPECT_EQ(kernelsight("describe hbm_module_gpu").status, 2);
}

// Decode is memory-bound: a memory module sustaining 85% of the HBM bandwidth makes tokens slower
// than the roofline (100%, 2 us per kernel), by at most the bandwidth ratio plus latencies.
TEST(Plugin, ItsMemoryModuleTimesTheKernels) {
  const fs::path dir = fs::temp_directory_path() / ("ks_plugin_" + std::to_string(::getpid()));
  const auto roof = run_summary("--set hardware.gpu.tier=roofline", dir / "roof");
  const auto plug = run_summary(kPlugin + " --set hardware.gpu.kind=hbm_module_gpu", dir / "plug");
  const double ratio = plug["mean_tpot_ms"].get<double>() / roof["mean_tpot_ms"].get<double>();
  EXPECT_GT(ratio, 1.0);
  EXPECT_LT(ratio, 1.0 / 0.85 + 0.05);
  EXPECT_EQ(plug["completed"], 200);
  fs::remove_all(dir);
}

TEST(Plugin, AMissingLibraryExitsTwoNamingIt) {
  const CliResult r = kernelsight("list --plugin /nonexistent/libnothing.so");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("/nonexistent/libnothing.so"), std::string::npos) << r.out;
}
