#include "kernels/boost_selection.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
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

double sign_test_p(std::size_t wins, std::size_t n) {
  double p = 0;
  for (std::size_t k = wins; k <= n; ++k)
    p += std::exp(std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
                  std::lgamma(static_cast<double>(n - k) + 1) - static_cast<double>(n) * std::log(2.0));
  return p;
}

ResidualFade select_residual_fade(const std::vector<double>& rows, std::size_t dims,
                                  const std::vector<double>& targets, const std::vector<double>& weights,
                                  const std::vector<std::size_t>& family, const BoostOptions& options) {
  const std::size_t n = targets.size();
  if (dims == 0 || weights.size() != n || family.size() != n || rows.size() != n * dims)
    throw std::invalid_argument("select_residual_fade: sizes differ");
  ResidualFade fade;
  if (n == 0) return fade;
  double top = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) top = std::max(top, rows[i * dims]);
  fade.max_log2_work = top;
  const double edge = top - kFadeProbeOctaves;
  std::vector<double> fit_rows, fit_targets, fit_weights;
  std::vector<std::size_t> probe;
  double fitted_top = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i * dims] > edge) {
      probe.push_back(i);
      continue;
    }
    fitted_top = std::max(fitted_top, rows[i * dims]);
    fit_rows.insert(fit_rows.end(), rows.begin() + static_cast<long>(i * dims),
                    rows.begin() + static_cast<long>((i + 1) * dims));
    fit_targets.push_back(targets[i]);
    fit_weights.push_back(weights[i]);
  }
  if (fit_targets.size() < 50 || probe.size() < 10) return fade;
  BoostedTrees trees;
  trees.fit(fit_rows, dims, fit_targets, fit_weights, options);
  // Weighted |predicted/measured - 1| of every probed row, per candidate.
  auto errors = [&](double octaves) {
    ResidualFade candidate;
    candidate.max_log2_work = fitted_top;
    candidate.octaves = octaves;
    std::vector<double> e(probe.size());
    for (std::size_t j = 0; j < probe.size(); ++j) {
      const std::size_t i = probe[j];
      const double residual = candidate.factor(rows[i * dims]) * trees.predict(&rows[i * dims]);
      e[j] = weights[i] * std::fabs(std::exp(residual - targets[i]) - 1.0);
    }
    return e;
  };
  double probe_weight = 0;
  for (const std::size_t i : probe) probe_weight += weights[i];
  auto mape = [&](const std::vector<double>& e) {
    return 100.0 * std::accumulate(e.begin(), e.end(), 0.0) / probe_weight;
  };
  const std::vector<double> flat = errors(INFINITY);
  fade.probe_rows = probe.size();
  fade.flat_probe_mape = fade.probe_mape = mape(flat);
  for (const double octaves : kFadeCandidates) {
    const std::vector<double> e = errors(octaves);
    // Better on the probe as a whole and in a significant majority of the shape families.
    std::map<std::size_t, double> gain;  // family -> flat error - candidate error
    for (std::size_t j = 0; j < probe.size(); ++j) gain[family[probe[j]]] += flat[j] - e[j];
    std::size_t wins = 0;
    for (const auto& [id, g] : gain) wins += g > 0;
    if (mape(e) < fade.probe_mape && sign_test_p(wins, gain.size()) < kFadeSignificance) {
      fade.probe_mape = mape(e);
      fade.octaves = octaves;
    }
  }
  return fade;
}

}  // namespace ks::kernels
