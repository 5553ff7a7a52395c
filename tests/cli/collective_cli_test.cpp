// `kernelsight collective` as a user runs it.
#include <gtest/gtest.h>

#include "tests/support/cli_runner.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

using Result = ks::test_support::CliResult;

Result kernelsight(const std::string& args) { return ks::test_support::run_cli(KS_CLI, args); }

}  // namespace

TEST(CollectiveCli, PrintsThePredictedRingAllReduceTime) {
  const Result r = kernelsight(
      "collective --topology dgx_h100 --kind all_reduce --gpus 4 --bytes 64MiB --algorithm ring "
      "--set nvlink_bandwidth=400GB/s --set nvlink_latency=5us --set collective_overhead=10us "
      "--set ll_bandwidth_fraction=1 --set simple_step_latency=0us --set local_copy_bandwidth=0GB/s");
  ASSERT_EQ(r.status, 0) << r.out;
  // 10 us + 6 x (5 us + 16 MiB / 400 GB/s) = 10 + 6 x (5 + 41.94304) = 291.66 us.
  EXPECT_NE(r.out.find("predicted time:  291.66 us"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("alpha-beta:      291.66 us"), std::string::npos) << r.out;
}

TEST(CollectiveCli, BadInputExitsWithStatus2AndSaysWhy) {
  Result r = kernelsight("collective --kind all_sum --bytes 1MiB");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown --kind 'all_sum'"), std::string::npos) << r.out;
  r = kernelsight("collective --bytes 12parsecs");
  EXPECT_EQ(r.status, 2);
  r = kernelsight("collective --bytes 1MiB --set nvlink_bandwith=1GB/s");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("did you mean 'nvlink_bandwidth'"), std::string::npos) << r.out;
  r = kernelsight("collective --topology torus --bytes 1MiB");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("registered kinds: dgx_a100"), std::string::npos) << r.out;
}

TEST(CollectiveCli, NamesTheProtocolThatSizeRunsWith) {
  const std::string base =
      "collective --topology dgx_h100 --kind all_reduce --gpus 8 --set nvlink_bandwidth=200GB/s "
      "--set nvlink_latency=1us --set collective_overhead=20us --set ll_bandwidth_fraction=0.5 "
      "--set simple_step_latency=4us --set local_copy_bandwidth=0GB/s --bytes ";
  Result r = kernelsight(base + "64KiB");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("protocol:        LL "), std::string::npos) << r.out;
  // 20 us + 14 x (1 us + 8 KiB / 100 GB/s) = 20 + 14 x 1.08192 = 35.15 us.
  EXPECT_NE(r.out.find("predicted time:  35.15 us"), std::string::npos) << r.out;
  r = kernelsight(base + "256MiB");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("protocol:        Simple "), std::string::npos) << r.out;
  // 20 us + 14 x (5 us + 32 MiB / 200 GB/s) = 20 + 14 x 172.77216 = 2438.81 us.
  EXPECT_NE(r.out.find("predicted time:  2438.81 us"), std::string::npos) << r.out;
}

TEST(CollectiveCli, MoreGpusThanANodeSpanNodesOverInfiniBand) {
  const Result r = kernelsight(
      "collective --topology dgx_h100 --kind all_reduce --gpus 16 --bytes 1GiB --set ib_bandwidth=40GB/s");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(2 nodes x 8 GPUs)"), std::string::npos) << r.out;
  // The ring crosses the NICs: bus bandwidth cannot exceed one NIC's 40 GB/s.
  const auto at = r.out.find("bus bw:");
  ASSERT_NE(at, std::string::npos) << r.out;
  const double busbw = std::stod(r.out.substr(at + 7));
  EXPECT_GT(busbw, 30.0) << r.out;
  EXPECT_LE(busbw, 40.0) << r.out;
}

TEST(ValidateCollectivesCli, HeldOutErrorsStayNearTheTargetsAndThePresetsCarryTheFit) {
  const std::string rows = ::testing::TempDir() + "validate_collectives_rows.csv";
  const Result r = kernelsight(std::string("validate-collectives --data ") + KS_SOURCE_DIR +
                               "/data/collectives/collectives.csv --rows " + rows);
  ASSERT_EQ(r.status, 0) << r.out;
  // The presets' defaults are the fit (a changed model or data set must update them).
  ASSERT_NE(r.out.find("## Topology preset defaults"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("**no**"), std::string::npos) << r.out;
  // "| held-out median error | 7.0% (348 rows) | 17.2% (336 rows) |": ≥ 1 MiB, < 1 MiB.
  const auto at = r.out.find("| held-out median error | ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const double big = std::stod(r.out.substr(at + 26));
  const double small = std::stod(r.out.substr(r.out.find(" | ", at + 26) + 3));
  EXPECT_LE(big, 10.0) << "issue target 10%";
  EXPECT_LE(small, 25.0) << "issue target 25%";
  // --rows: every measurement with its predictions, one line each after the header.
  std::ifstream in(rows);
  std::string line;
  ASSERT_TRUE(std::getline(in, line)) << rows;
  EXPECT_EQ(line, "setup,collective,num_workers,devices_per_node,groups,size_bytes,measured_us,predicted_us,heldout_us,mixed");
  int n = 0;
  while (std::getline(in, line)) ++n;
  EXPECT_EQ(n, 684);
}

TEST(ValidateCollectivesCli, MalformedDataNamesTheFileAndLine) {
  const std::string path = ::testing::TempDir() + "validate_collectives_bad.csv";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("source,setup,gpu,collective,num_workers,devices_per_node,groups,size_bytes,time_us\n"
             "vidur,a100_dgx,A100,all_reduce,2,2,1,2048,43.0\n"
             "vidur,a100_dgx,A100,all_reduce,two,2,1,2048,43.0\n",
             f);
  std::fclose(f);
  Result r = kernelsight("validate-collectives --data " + path);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(path + ":3:"), std::string::npos) << r.out;
  r = kernelsight("validate-collectives --data no_such_file.csv");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no_such_file.csv: cannot open"), std::string::npos) << r.out;
}

TEST(CollectiveCli, ShowsTheLocalCopyOfEachRanksOwnChunk) {
  const Result r = kernelsight(
      "collective --topology hgx_b200 --kind all_gather --gpus 4 --bytes 64MiB --set local_copy_bandwidth=100GB/s");
  ASSERT_EQ(r.status, 0) << r.out;
  // 16 MiB / 100 GB/s = 167.77 us.
  EXPECT_NE(r.out.find("local copy:      167.77 us"), std::string::npos) << r.out;
}

