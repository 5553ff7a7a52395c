// Kernel statistics are exact integer sums: n launches added at once equal n launches one by one,
// whatever the values, which is what keeps step launches identical to kernel launches.
#include "proto/kernel_stats.hpp"

#include <gtest/gtest.h>

#include <random>

namespace ks::proto {
namespace {

TEST(KernelClassStats, ManyLaunchesAtOnceEqualThemOneByOne) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> seconds(1e-7, 3e-3), work(1e3, 1e13);
  for (int trial = 0; trial < 200; ++trial) {
    kernels::Kernel k;
    k.flops = work(rng);
    k.bytes = work(rng);
    kernels::KernelCost c{};
    c.seconds = seconds(rng);
    c.launch_seconds = 2e-6 < c.seconds ? 2e-6 : 0.0;
    c.efficiency = 0.7;
    c.bound = kernels::Bound::Memory;
    KernelClassStats one_by_one, at_once;
    const std::uint64_t n = 1 + static_cast<std::uint64_t>(trial);
    for (std::uint64_t i = 0; i < n; ++i) one_by_one.add(k, c, 1);
    at_once.add(k, c, n);
    EXPECT_EQ(one_by_one.busy_ps, at_once.busy_ps);
    EXPECT_EQ(one_by_one.roofline_ps, at_once.roofline_ps);
    EXPECT_TRUE(one_by_one.flop_count == at_once.flop_count);
    EXPECT_TRUE(one_by_one.byte_count == at_once.byte_count);
    EXPECT_EQ(at_once.launches, n);
    EXPECT_EQ(at_once.bound_counts[static_cast<std::size_t>(kernels::Bound::Memory)], n);
    // Picosecond resolution: the total is the time of n launches to within n half-picoseconds.
    EXPECT_NEAR(at_once.busy_seconds(), c.seconds * static_cast<double>(n), 0.5e-12 * static_cast<double>(n) + 1e-15);
  }
}

TEST(KernelClassStats, WideCountersDoNotOverflowOnLongRuns) {
  kernels::Kernel k;
  k.flops = 4e15;  // a large prefill GEMM's FLOPs, a billion times: 4e24 > 2^64
  k.bytes = 1.0;
  kernels::KernelCost c{};
  c.seconds = 1e-3;
  KernelClassStats s;
  s.add(k, c, 1'000'000'000ULL);
  EXPECT_NEAR(s.flops(), 4e24, 4e24 * 1e-12);
  KernelClassStats twice = s;
  twice.merge(s);
  EXPECT_NEAR(twice.flops(), 8e24, 8e24 * 1e-12);
  EXPECT_EQ(twice.launches, 2'000'000'000ULL);
}

}  // namespace
}  // namespace ks::proto
