#include "kernels/moe.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

namespace ks::kernels {
namespace {

// Exact expectation by enumerating every routing of `tokens` tokens, each choosing a k-subset.
double enumerate_touched(int experts, int k, int tokens) {
  std::vector<unsigned> subsets;
  for (unsigned mask = 0; mask < (1u << experts); ++mask) {
    if (__builtin_popcount(mask) == k) subsets.push_back(mask);
  }
  double total = 0, count = 0;
  std::vector<std::size_t> pick(static_cast<std::size_t>(tokens), 0);
  while (true) {
    unsigned all = 0;
    for (std::size_t i : pick) all |= subsets[i];
    total += __builtin_popcount(all);
    count += 1;
    std::size_t t = 0;
    while (t < pick.size() && ++pick[t] == subsets.size()) pick[t++] = 0;
    if (t == pick.size()) break;
  }
  return total / count;
}

TEST(Moe, ExpectedExpertsTouchedMatchesEnumeration) {
  for (int tokens = 1; tokens <= 4; ++tokens) {
    EXPECT_NEAR(expected_experts_touched(8, 2, tokens), enumerate_touched(8, 2, tokens), 1e-9)
        << tokens;
  }
  EXPECT_NEAR(expected_experts_touched(6, 1, 3), enumerate_touched(6, 1, 3), 1e-9);
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 1), 2.0);
  EXPECT_NEAR(expected_experts_touched(8, 2, 4096), 8.0, 1e-9);
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 8, 1), 8.0);
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 0), 0.0);
}

}  // namespace
}  // namespace ks::kernels
