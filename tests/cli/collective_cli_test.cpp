// `kernelsight collective` as a user runs it.
#include <gtest/gtest.h>

#include "tests/support/cli_runner.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

using Result = ks::test_support::CliResult;

Result kernelsight(const std::string& args) { return ks::test_support::run_cli(KS_CLI, args); }

}  // namespace

TEST(CollectiveCli, PrintsThePredictedRingAllReduceTime) {
  const Result r = kernelsight(
      "collective --topology dgx_h100 --kind all_reduce --gpus 4 --bytes 64MiB --algorithm ring "
      "--set nvlink_bandwidth=400GB/s --set nvlink_latency=5us --set collective_overhead=10us");
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
