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

using ks::kernels::ResidualFade;
using ks::kernels::select_residual_fade;

TEST(ResidualFade, FadesLinearlyBeyondTheLargestFittedWork) {
  ResidualFade fade;
  fade.max_log2_work = 12;
  EXPECT_DOUBLE_EQ(fade.factor(20), 1.0);  // no fade (infinite octaves): the residual extrapolates flat
  fade.octaves = 2;
  EXPECT_DOUBLE_EQ(fade.factor(8), 1.0);
  EXPECT_DOUBLE_EQ(fade.factor(12), 1.0);
  EXPECT_DOUBLE_EQ(fade.factor(13), 0.5);
  EXPECT_DOUBLE_EQ(fade.factor(14), 0.0);
  EXPECT_DOUBLE_EQ(fade.factor(15), 0.0);
  fade.octaves = 0;  // a cut at the edge
  EXPECT_DOUBLE_EQ(fade.factor(12), 1.0);
  EXPECT_DOUBLE_EQ(fade.factor(12.01), 0.0);
}

namespace {
// `families` families with rows at log2 work 0, 1/per_octave, .. 12; x1 the family's number;
// targets from `residual` (a function of the work).
template <typename F>
Data work_data(int families, F residual, int per_octave = 4) {
  Data d;
  for (int f = 0; f < families; ++f)
    for (int i = 0; i <= 12 * per_octave; ++i) {
      const double work = static_cast<double>(i) / per_octave;
      d.rows.push_back(work);
      d.rows.push_back(f);
      d.y.push_back(residual(work) + 0.01 * ((i * 7 + f * 3) % 5 - 2));  // a little repeat noise
      d.w.push_back(1.0);
      d.family.push_back(static_cast<std::size_t>(f));
    }
  return d;
}
BoostOptions probe_options() {
  BoostOptions o;
  o.depth = 2;
  o.trees = 50;
  o.learning_rate = 0.4;
  return o;
}
}  // namespace

// A correction that belongs to one range of work (here 8 < log2 work <= 10) is extended flat past
// the edge of the rows the trees saw; the probe, whose trees see only log2 work <= 10, finds the
// rows above better predicted with the residual cut or faded, in every family.
TEST(SelectResidualFade, FadesACorrectionThatDoesNotCarryPastTheEdge) {
  const Data d = work_data(10, [](double work) { return work > 8 && work <= 10 ? 0.2 : 0.0; });
  const ResidualFade fade = select_residual_fade(d.rows, 2, d.y, d.w, d.family, probe_options());
  EXPECT_DOUBLE_EQ(fade.max_log2_work, 12.0);
  EXPECT_EQ(fade.probe_rows, 10u * 8u);  // log2 work 10.25 .. 12
  EXPECT_FALSE(std::isinf(fade.octaves));
  EXPECT_LT(fade.probe_mape, 0.5 * fade.flat_probe_mape);
  // The truth drops at once: the cut is the best candidate.
  EXPECT_DOUBLE_EQ(fade.octaves, 0.0);
}

// A correction that holds everywhere above some work carries past the edge: no fade.
TEST(SelectResidualFade, KeepsACorrectionThatCarries) {
  const Data d = work_data(10, [](double work) { return work > 6 ? 0.2 : 0.0; });
  const ResidualFade fade = select_residual_fade(d.rows, 2, d.y, d.w, d.family, probe_options());
  EXPECT_EQ(fade.probe_rows, 80u);
  EXPECT_TRUE(std::isinf(fade.octaves));
  EXPECT_DOUBLE_EQ(fade.probe_mape, fade.flat_probe_mape);
  EXPECT_LT(fade.flat_probe_mape, 2.0);
}

// One family cannot show that a fade carries to other shapes (the sign test over families needs
// several): no fade, though the probe's error is lower with one.
TEST(SelectResidualFade, OneFamilyNeverFades) {
  const auto drop = [](double work) { return work > 8 && work <= 10 ? 0.2 : 0.0; };
  const Data d = work_data(1, drop, 32);
  const ResidualFade fade = select_residual_fade(d.rows, 2, d.y, d.w, d.family, probe_options());
  EXPECT_EQ(fade.probe_rows, 64u);
  EXPECT_TRUE(std::isinf(fade.octaves));
  EXPECT_DOUBLE_EQ(fade.probe_mape, fade.flat_probe_mape);
  // The same rows dealt into 10 families (round-robin) do fade.
  Data dealt = d;
  for (std::size_t i = 0; i < dealt.family.size(); ++i) dealt.family[i] = i % 10;
  const ResidualFade many = select_residual_fade(dealt.rows, 2, dealt.y, dealt.w, dealt.family, probe_options());
  EXPECT_FALSE(std::isinf(many.octaves));
}

// Too few rows below the probed octaves: no probe at all.
TEST(SelectResidualFade, TooFewRowsAreNotProbed) {
  const Data d = work_data(1, [](double) { return 0.1; });  // 41 rows up to log2 work 10
  const ResidualFade fade = select_residual_fade(d.rows, 2, d.y, d.w, d.family, probe_options());
  EXPECT_EQ(fade.probe_rows, 0u);
  EXPECT_TRUE(std::isinf(fade.octaves));
  EXPECT_THROW(select_residual_fade(d.rows, 2, d.y, d.w, {}, probe_options()), std::invalid_argument);
}
