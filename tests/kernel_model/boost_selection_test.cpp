#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/boost_selection.hpp"

using ks::kernels::BoostOptions;
using ks::kernels::BoostSelection;
using ks::kernels::default_boost_grid;
using ks::kernels::select_boost_options;

namespace {

// Rows of `families` families of 60 rows: x0 a size shared by every family, x1 the family's own
// number. y = 0.3 [x0 > 20] (what carries from family to family) + a per-family offset of size
// `offset` that no other family can reveal.
struct Data {
  std::vector<double> rows, y, w;
  std::vector<std::size_t> family;
};
Data make_data(int families, double offset) {
  Data d;
  std::uint32_t state = 12345;
  auto uniform = [&] {  // deterministic, in [-1, 1)
    state = state * 1664525u + 1013904223u;
    return static_cast<double>(state >> 8) / static_cast<double>(1u << 23) - 1.0;
  };
  for (int f = 0; f < families; ++f) {
    const double own = offset * uniform();
    for (int i = 0; i < 60; ++i) {
      const double x0 = i;
      d.rows.push_back(x0);
      d.rows.push_back(f);
      d.y.push_back((x0 > 20 ? 0.3 : 0.0) + own);
      d.w.push_back(1.0);
      d.family.push_back(static_cast<std::size_t>(f));
    }
  }
  return d;
}

// Weighted mean |exp(y) - 1| in %: the error of predicting no residual at all.
double no_residual_error(const Data& d) {
  double e = 0;
  for (double y : d.y) e += std::fabs(std::exp(-y) - 1.0);
  return 100.0 * e / static_cast<double>(d.y.size());
}

std::vector<BoostOptions> small_grid() {
  std::vector<BoostOptions> grid;
  for (int depth : {2, 4})
    for (double rate : {0.1, 0.4}) {
      BoostOptions o;
      o.depth = depth;
      o.learning_rate = rate;
      o.trees = 50;
      grid.push_back(o);
    }
  return grid;
}

}  // namespace

// The winner is the grid's best under the same folds: scoring each candidate alone gives the
// same error, and none scores lower.
TEST(BoostSelection, PicksTheBestCandidateOfTheGrid) {
  const Data d = make_data(10, 0.02);
  const BoostSelection all = select_boost_options(d.rows, 2, d.y, d.w, d.family, small_grid(), 5);
  EXPECT_EQ(all.folds, 5u);
  EXPECT_EQ(all.families, 10u);
  double best = std::numeric_limits<double>::infinity();
  for (const BoostOptions& candidate : small_grid()) {
    const BoostSelection one = select_boost_options(d.rows, 2, d.y, d.w, d.family, {candidate}, 5);
    best = std::min(best, one.cv_mape);
    if (one.options.depth == all.options.depth && one.options.learning_rate == all.options.learning_rate) {
      EXPECT_DOUBLE_EQ(one.cv_mape, all.cv_mape);
    }
  }
  EXPECT_DOUBLE_EQ(all.cv_mape, best);
  // The shared step is learnable: held-out families are predicted far better than by no residual.
  EXPECT_LT(all.cv_mape, 0.3 * no_residual_error(d));
  EXPECT_LE(all.options.trees, 50);
  EXPECT_EQ(all.options.trees % 25, 0);
}

// What only a family's own rows reveal cannot be learned for a held-out family: the
// cross-validated error stays near that of no residual, though trees fit the rows they see.
TEST(BoostSelection, HeldOutFamiliesAreNotSeen) {
  Data d = make_data(12, 0.3);
  for (std::size_t i = 0; i < d.y.size(); ++i) d.y[i] -= d.rows[2 * i] > 20 ? 0.3 : 0.0;  // offsets only
  const BoostSelection s = select_boost_options(d.rows, 2, d.y, d.w, d.family, small_grid(), 4);
  EXPECT_EQ(s.folds, 4u);
  EXPECT_GT(s.cv_mape, 0.5 * no_residual_error(d));
  ks::kernels::BoostedTrees fitted;
  fitted.fit(d.rows, 2, d.y, d.w, small_grid().back());
  double seen = 0;
  for (std::size_t i = 0; i < d.y.size(); ++i) seen += std::fabs(std::exp(fitted.predict(&d.rows[2 * i]) - d.y[i]) - 1);
  EXPECT_LT(100.0 * seen / static_cast<double>(d.y.size()), 0.2 * no_residual_error(d));
}

TEST(BoostSelection, OneFamilyKeepsTheDefaults) {
  Data d = make_data(1, 0.0);
  const BoostSelection s = select_boost_options(d.rows, 2, d.y, d.w, d.family);
  EXPECT_EQ(s.folds, 0u);
  EXPECT_EQ(s.families, 1u);
  EXPECT_EQ(s.options.depth, BoostOptions{}.depth);
  EXPECT_EQ(s.options.trees, BoostOptions{}.trees);
}

// Every candidate of the default grid stays within the prediction budget.
TEST(BoostSelection, DefaultGridFitsThePredictionBudget) {
  const auto grid = default_boost_grid();
  ASSERT_FALSE(grid.empty());
  for (const BoostOptions& o : grid) EXPECT_LE(o.trees * o.depth, ks::kernels::kBoostComparisonBudget);
}

TEST(BoostedTrees, PredictsWithTheFirstTreesOnly) {
  const Data d = make_data(3, 0.0);
  BoostOptions o;
  o.trees = 40;
  ks::kernels::BoostedTrees all, first;
  all.fit(d.rows, 2, d.y, d.w, o);
  o.trees = 10;
  first.fit(d.rows, 2, d.y, d.w, o);
  for (std::size_t i = 0; i < 20; ++i) EXPECT_DOUBLE_EQ(all.predict(&d.rows[2 * i], 10), first.predict(&d.rows[2 * i]));
}
