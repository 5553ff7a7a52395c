#pragma once
// Choosing the residual trees' settings (depth, learning rate, number of trees) by an inner
// cross-validation over the calibration rows alone: rows are grouped into shape families (the
// kernel's shape without its token count, e.g. one GEMM's N and K), whole families are held out
// in turn, and the candidate whose trees predict the held-out families best wins. A family is
// what a model the calibration never saw brings: a new N x K at every M. Nothing outside the
// calibration sweep is looked at, so a validation on other models stays an honest test.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/boosted_trees.hpp"

namespace ks::kernels {

// Comparisons per prediction (trees x depth) a candidate may use: the target tier must price
// a million kernels per second on one core (docs/kernel-model.md, bench/kernel_bench).
constexpr int kBoostComparisonBudget = 600;

struct BoostSelection {
  BoostOptions options;     // the winner, with its number of trees
  double cv_mape = 0;       // its cross-validated error, % (weighted mean |predicted/measured - 1|)
  std::size_t folds = 0;    // 0: too few families to cross-validate; `options` are the defaults
  std::size_t families = 0;
};

// The candidates: depths 4, 6, 8 and learning rates 0.1, 0.2, 0.4 with as many trees as the
// budget allows, each also scored at every 25th tree (fewer trees are a candidate of their own).
std::vector<BoostOptions> default_boost_grid();

// rows: n x dims features, targets (log residuals) and weights as for BoostedTrees::fit;
// family: one id per row. Families are dealt round-robin, in id order, into `folds` folds.
BoostSelection select_boost_options(const std::vector<double>& rows, std::size_t dims,
                                    const std::vector<double>& targets, const std::vector<double>& weights,
                                    const std::vector<std::size_t>& family,
                                    const std::vector<BoostOptions>& grid = default_boost_grid(),
                                    std::size_t folds = 5);

// How the residual extrapolates beyond the largest amount of work it was fitted on. Feature 0 of
// every residual is log2 of the work the engine varies (M x batch, tokens); a sweep stops at some
// M (4096 on the shipped A100 sweep) and a serving engine runs beyond it (a 32k-token prefill).
// Trees extend whatever correction they learned at the sweep's edge, flat, to any size; what
// they learned there is the staircase of one range of M, not a trend. So the residual can fade
// linearly to nothing over `octaves` beyond the largest fitted work (infinite: no fade).
struct ResidualFade {
  double max_log2_work = INFINITY;  // feature 0 of the largest fitted row
  double octaves = INFINITY;
  // How `octaves` was chosen (select_residual_fade): 0 rows probed means it was not.
  std::size_t probe_rows = 0;
  double probe_mape = 0;       // %, with the chosen fade
  double flat_probe_mape = 0;  // %, without a fade

  // The share of the residual applied at work log2_work.
  double factor(double log2_work) const {
    const double beyond = log2_work - max_log2_work;
    if (!(beyond > 0) || std::isinf(octaves)) return 1.0;
    return octaves > 0 ? std::max(0.0, 1.0 - beyond / octaves) : 0.0;
  }
};

// P(at least `wins` of `n` fair coin flips come up heads): the one-sided sign test.
double sign_test_p(std::size_t wins, std::size_t n);

// The octaves a fade is probed over: the rows whose work lies this far below the largest.
constexpr double kFadeProbeOctaves = 2.0;
// The fades tried, in octaves (0: the residual stops at the edge).
constexpr double kFadeCandidates[] = {4.0, 3.0, 2.0, 1.0, 0.5, 0.0};
// A fade must beat none in a significant majority of the shape families (one-sided sign test).
constexpr double kFadeSignificance = 0.05;

// Chooses the fade from the calibration rows alone by imitating an extrapolation: trees with
// `options` are fitted on the rows up to kFadeProbeOctaves below the largest work and predict the
// rows above. A candidate fade (measured from the largest work the trees saw) replaces "no fade"
// only if it lowers the probed rows' weighted mean |predicted/measured - 1| and lowers it in a
// significant majority of the shape families (`family`: one id per row, as for
// select_boost_options); the lowest such error wins. The residual a single family learned beyond
// its own edge tells nothing that carries to other shapes, so one family never fades. Too few
// rows on either side (fewer than 50 below or 10 above): no fade, probe_rows 0. Targets are
// log residuals against a parametric part that saw only the rows below (fit_efficiency), or the
// probe would flatter the parametric part's own extrapolation.
ResidualFade select_residual_fade(const std::vector<double>& rows, std::size_t dims,
                                  const std::vector<double>& targets, const std::vector<double>& weights,
                                  const std::vector<std::size_t>& family, const BoostOptions& options);

}  // namespace ks::kernels
