#include "kernels/boost_selection.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace ks::kernels {

namespace {
constexpr int kTreeStep = 25;  // candidates differ by this many trees
}

std::vector<BoostOptions> default_boost_grid() {
  std::vector<BoostOptions> grid;
  for (int depth : {4, 6, 8})
    for (double rate : {0.1, 0.2, 0.4}) {
      BoostOptions o;
      o.depth = depth;
      o.learning_rate = rate;
      o.trees = kBoostComparisonBudget / depth;
      grid.push_back(o);
    }
  return grid;
}

BoostSelection select_boost_options(const std::vector<double>& rows, std::size_t dims,
                                    const std::vector<double>& targets, const std::vector<double>& weights,
                                    const std::vector<std::size_t>& family, const std::vector<BoostOptions>& grid,
                                    std::size_t folds) {
  const std::size_t n = targets.size();
  if (family.size() != n || weights.size() != n || rows.size() != n * dims)
    throw std::invalid_argument("select_boost_options: sizes differ");
  BoostSelection best;
  std::map<std::size_t, std::size_t> fold_of;  // family id -> fold
  for (const std::size_t f : family) fold_of.emplace(f, 0);
  best.families = fold_of.size();
  folds = std::min(folds, fold_of.size());
  if (folds < 2 || grid.empty()) return best;
  {
    std::size_t rank = 0;
    for (auto& [id, fold] : fold_of) fold = rank++ % folds;
  }
  double total_weight = 0;
  for (const double w : weights) total_weight += w;

  best.folds = folds;
  best.cv_mape = INFINITY;
  for (const BoostOptions& candidate : grid) {
    std::vector<int> checkpoints;
    for (int t = kTreeStep; t < candidate.trees; t += kTreeStep) checkpoints.push_back(t);
    checkpoints.push_back(candidate.trees);
    std::vector<double> error(checkpoints.size(), 0.0);
    for (std::size_t fold = 0; fold < folds; ++fold) {
      std::vector<double> fit_rows, fit_targets, fit_weights;
      std::vector<std::size_t> held;
      for (std::size_t i = 0; i < n; ++i) {
        if (fold_of[family[i]] == fold) {
          held.push_back(i);
          continue;
        }
        fit_rows.insert(fit_rows.end(), rows.begin() + static_cast<long>(i * dims),
                        rows.begin() + static_cast<long>((i + 1) * dims));
        fit_targets.push_back(targets[i]);
        fit_weights.push_back(weights[i]);
      }
      BoostedTrees trees;
      trees.fit(fit_rows, dims, fit_targets, fit_weights, candidate);
      for (const std::size_t i : held)
        for (std::size_t c = 0; c < checkpoints.size(); ++c) {
          const double predicted = trees.predict(&rows[i * dims], static_cast<std::size_t>(checkpoints[c]));
          error[c] += weights[i] * std::fabs(std::exp(predicted - targets[i]) - 1.0);
        }
    }
    for (std::size_t c = 0; c < checkpoints.size(); ++c) {
      const double mape = 100.0 * error[c] / total_weight;
      if (mape < best.cv_mape) {  // ties keep the earlier, cheaper candidate
        best.cv_mape = mape;
        best.options = candidate;
        best.options.trees = checkpoints[c];
      }
    }
  }
  return best;
}

}  // namespace ks::kernels
