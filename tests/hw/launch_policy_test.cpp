// The host's kernel-launch cost (pure, no SystemC): one graph launch for a decode step within the
// captured sizes, one launch per kernel otherwise.
#include <gtest/gtest.h>

#include "hw/host/launch_policy.hpp"

using namespace ks;

TEST(LaunchPolicy, OneGraphLaunchOnlyForDecodeStepsWithinTheCapturedSizes) {
  hw::LaunchPolicy p;
  p.per_kernel_s = 5e-6;
  p.graph_launch_s = 20e-6;
  p.max_graph_batch = 64;
  const hw::StepShape decode{16, 16, true, 1}, big_decode{65, 65, true, 1}, mixed{16, 600, false, 1};
  EXPECT_DOUBLE_EQ(p.launch_seconds(decode, 300), 300 * 5e-6);  // graphs off
  p.cuda_graphs = true;
  EXPECT_TRUE(p.uses_graph(decode));
  EXPECT_DOUBLE_EQ(p.launch_seconds(decode, 300), 20e-6);
  EXPECT_DOUBLE_EQ(p.launch_seconds(big_decode, 300), 300 * 5e-6);  // above the limit
  EXPECT_DOUBLE_EQ(p.launch_seconds(mixed, 300), 300 * 5e-6);       // prefill in the step
  EXPECT_DOUBLE_EQ(p.launch_seconds(decode, 0), 0.0);
}
