// Latencies stored as runs of equal values must give the statistics of the expanded samples.
#include "serving/latency_samples.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "serving/metrics.hpp"

namespace ks::serving {
namespace {

// Batches of equal gaps, as a decode step emits them, in a random order of values.
std::vector<double> batched_gaps(std::uint32_t seed, int batches) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> gap(0.005, 0.080);
  std::uniform_int_distribution<int> size(1, 64);
  std::vector<double> out;
  for (int b = 0; b < batches; ++b) {
    const double g = gap(rng);
    out.insert(out.end(), static_cast<std::size_t>(size(rng)), g);
  }
  return out;
}

TEST(LatencySamples, RunsGiveTheStatisticsOfTheExpandedSamples) {
  const std::vector<double> gaps = batched_gaps(7, 2000);
  LatencySamples samples;
  for (double g : gaps) samples.add(g);
  EXPECT_EQ(samples.size(), gaps.size());
  EXPECT_EQ(samples.runs(), 2000u);  // consecutive equal values collapse

  const LatencyStats expanded = latency_stats(gaps);  // sorts every sample
  const LatencyStats runs = samples.stats();
  EXPECT_EQ(runs.median_ms, expanded.median_ms);  // order statistics: exact
  EXPECT_EQ(runs.p90_ms, expanded.p90_ms);
  EXPECT_EQ(runs.p99_ms, expanded.p99_ms);
  EXPECT_NEAR(runs.mean_ms, expanded.mean_ms, 1e-12 * expanded.mean_ms);  // sums in another order
  EXPECT_NEAR(runs.std_ms, expanded.std_ms, 1e-9 * expanded.std_ms);
  for (double q : {0.0, 12.5, 50.0, 77.7, 100.0}) EXPECT_EQ(samples.percentile(q), percentile(gaps, q)) << q;
}

// Long run lists: values across many binades, zero, negative values and values repeated in runs
// far apart must give the percentiles of the expanded samples.
TEST(LatencySamples, LongRunListsSortLikeTheExpandedSamples) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(-12.0, 3.0);
  std::uniform_int_distribution<int> count(1, 5);
  std::vector<double> values;
  LatencySamples samples;
  for (int i = 0; i < 20000; ++i) {
    double v = std::pow(10.0, exponent(rng));
    if (i % 97 == 0) v = 0.0;
    if (i % 89 == 0) v = -v;
    if (i % 13 == 0 && !values.empty()) v = values[values.size() / 2];  // a value seen before
    const int c = count(rng);
    samples.add(v, static_cast<std::uint64_t>(c));
    values.insert(values.end(), static_cast<std::size_t>(c), v);
  }
  ASSERT_GT(samples.runs(), 10000u);
  for (double q = 0.0; q <= 100.0; q += 0.5) EXPECT_EQ(samples.percentile(q), percentile(values, q)) << q;
}

// Few samples put several percentiles on the same or neighbouring ranks (p50's upper neighbour
// above p90's lower one): each must still be the expanded samples' percentile.
TEST(LatencySamples, FewSamplesGiveTheStatisticsOfTheExpandedSamples) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> gap(0.001, 0.1);
  std::uniform_int_distribution<int> count(1, 3);
  for (int runs = 1; runs <= 12; ++runs) {
    LatencySamples samples;
    std::vector<double> values;
    for (int i = 0; i < runs; ++i) {
      const double v = i % 4 == 3 ? values.front() : gap(rng);  // some values repeat in runs apart
      const int c = count(rng);
      samples.add(v, static_cast<std::uint64_t>(c));
      values.insert(values.end(), static_cast<std::size_t>(c), v);
    }
    const LatencyStats expanded = latency_stats(values);
    const LatencyStats from_runs = samples.stats();
    EXPECT_EQ(from_runs.median_ms, expanded.median_ms) << runs;
    EXPECT_EQ(from_runs.p90_ms, expanded.p90_ms) << runs;
    EXPECT_EQ(from_runs.p99_ms, expanded.p99_ms) << runs;
  }
}

TEST(LatencySamples, CountsWeightTheirValues) {
  LatencySamples samples;
  samples.add(1.0, 3);
  samples.add(2.0);
  samples.add(0.5, 0);  // nothing
  // Samples {1, 1, 1, 2}: median 1, mean 1.25, p100 2.
  EXPECT_EQ(samples.size(), 4u);
  EXPECT_DOUBLE_EQ(samples.percentile(50), 1.0);
  EXPECT_DOUBLE_EQ(samples.percentile(100), 2.0);
  EXPECT_DOUBLE_EQ(samples.stats().mean_ms, 1250.0);
  EXPECT_DOUBLE_EQ(LatencySamples{}.stats().p99_ms, 0.0);
  EXPECT_THROW(samples.percentile(101), std::invalid_argument);
}

}  // namespace
}  // namespace ks::serving
