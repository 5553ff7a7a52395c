#include "base/util/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using ks::util::Rng;

TEST(Rng, SameSeedSameStream) {
  Rng a(42), b(42);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, ComponentStreamsAreIndependentOfEachOther) {
  Rng a = Rng::for_component(7, "source");
  Rng b = Rng::for_component(7, "router");
  Rng a2 = Rng::for_component(7, "source");
  Rng a_other_seed = Rng::for_component(8, "source");
  const auto x = a.next_u64();
  EXPECT_NE(x, b.next_u64());
  EXPECT_EQ(x, a2.next_u64());
  EXPECT_NE(x, a_other_seed.next_u64());
}

TEST(Rng, StableHashIsFnv1a) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(ks::util::stable_hash(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(ks::util::stable_hash("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(ks::util::stable_hash("foobar"), 0x85944171f73967e8ULL);
}

TEST(Rng, MomentsMatchTheDistributions) {
  Rng rng(1);
  const int n = 400000;
  double sum_u = 0, sum_e = 0, sum_n = 0, sum_n2 = 0, sum_g = 0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum_u += u;
    sum_e += rng.exponential(4.0);
    const double z = rng.normal(3.0, 2.0);
    sum_n += z;
    sum_n2 += (z - 3.0) * (z - 3.0);
    sum_g += rng.gamma(0.5, 2.0);
  }
  // Tolerances are ~5 standard errors of each sample mean.
  EXPECT_NEAR(sum_u / n, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(sum_e / n, 0.25, 5 * 0.25 / std::sqrt(n));
  EXPECT_NEAR(sum_n / n, 3.0, 5 * 2.0 / std::sqrt(n));
  EXPECT_NEAR(sum_n2 / n, 4.0, 5 * 4.0 * std::sqrt(2.0 / n));
  EXPECT_NEAR(sum_g / n, 1.0, 5 * std::sqrt(0.5 * 4.0 / n));
}

TEST(Rng, UniformIntCoversTheRangeEvenly) {
  Rng rng(3);
  std::vector<int> counts(6, 0);
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    const auto v = rng.uniform_int(1, 6);
    ASSERT_GE(v, 1);
    ASSERT_LE(v, 6);
    ++counts[static_cast<std::size_t>(v - 1)];
  }
  for (int c : counts) EXPECT_NEAR(c, n / 6.0, 5 * std::sqrt(n / 6.0));
  EXPECT_THROW(rng.uniform_int(2, 1), std::invalid_argument);
  EXPECT_THROW(rng.exponential(0.0), std::invalid_argument);
}
