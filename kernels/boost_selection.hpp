#pragma once
// Choosing the residual trees' settings (depth, learning rate, number of trees) by an inner
// cross-validation over the calibration rows alone: rows are grouped into shape families (the
// kernel's shape without its token count, e.g. one GEMM's N and K), whole families are held out
// in turn, and the candidate whose trees predict the held-out families best wins. A family is
// what a model the calibration never saw brings: a new N x K at every M. Nothing outside the
// calibration sweep is looked at, so a validation on other models stays an honest test.
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

}  // namespace ks::kernels
