#include "kernels/boosted_trees.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "kernels/number_list.hpp"

namespace ks::kernels {
namespace {

// Bin edges per feature from the distinct sorted values (quantiles when there are many).
std::vector<std::vector<double>> bin_edges(const std::vector<double>& rows, std::size_t n, std::size_t dims, int bins) {
  std::vector<std::vector<double>> edges(dims);
  std::vector<double> col;
  for (std::size_t f = 0; f < dims; ++f) {
    col.resize(n);  // the previous feature's unique() shrank it
    for (std::size_t i = 0; i < n; ++i) col[i] = rows[i * dims + f];
    std::sort(col.begin(), col.end());
    col.erase(std::unique(col.begin(), col.end()), col.end());
    std::vector<double>& e = edges[f];
    if (col.size() <= static_cast<std::size_t>(bins)) {
      for (std::size_t i = 0; i + 1 < col.size(); ++i) e.push_back(0.5 * (col[i] + col[i + 1]));
    } else {
      for (int b = 1; b < bins; ++b) {
        const std::size_t idx = col.size() * static_cast<std::size_t>(b) / static_cast<std::size_t>(bins);
        const double edge = 0.5 * (col[idx - 1] + col[idx]);
        if (e.empty() || edge > e.back()) e.push_back(edge);
      }
    }
  }
  return edges;
}

}  // namespace

void BoostedTrees::fit(const std::vector<double>& rows, std::size_t dims, const std::vector<double>& targets,
                       const std::vector<double>& weights, const BoostOptions& opt) {
  const std::size_t n = targets.size();
  if (rows.size() != n * dims || weights.size() != n) throw std::invalid_argument("BoostedTrees::fit: sizes differ");
  if (opt.depth < 1 || opt.depth > kMaxDepth || opt.bins < 2 || opt.bins > 255)
    throw std::invalid_argument("BoostedTrees::fit: depth must be 1..8 and bins 2..255");
  dims_ = dims;
  trees_.clear();
  if (n == 0) return;
  const double wsum = std::accumulate(weights.begin(), weights.end(), 0.0);
  base_ = 0;
  for (std::size_t i = 0; i < n; ++i) base_ += weights[i] * targets[i];
  base_ /= wsum;

  const auto edges = bin_edges(rows, n, dims, opt.bins);
  // Pre-binned features: bin index per (row, feature).
  std::vector<std::uint8_t> binned(n * dims);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t f = 0; f < dims; ++f) {
      const auto& e = edges[f];
      binned[i * dims + f] =
          static_cast<std::uint8_t>(std::upper_bound(e.begin(), e.end(), rows[i * dims + f]) - e.begin());
    }

  const std::size_t nb = static_cast<std::size_t>(opt.bins) + 1;
  std::vector<double> pred(n, base_), grad(n), hw, hg, gain(nb);
  std::vector<std::uint32_t> leaf(n);
  for (int t = 0; t < opt.trees; ++t) {
    for (std::size_t i = 0; i < n; ++i) grad[i] = targets[i] - pred[i];
    std::fill(leaf.begin(), leaf.end(), 0u);
    Tree tree;
    for (int d = 0; d < opt.depth; ++d) {
      // Histograms of weight and weighted gradient per (leaf, feature, bin).
      const std::size_t leaves = std::size_t{1} << d;
      hw.assign(leaves * dims * nb, 0.0);
      hg.assign(leaves * dims * nb, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t base = leaf[i] * dims * nb;
        for (std::size_t f = 0; f < dims; ++f) {
          const std::size_t at = base + f * nb + binned[i * dims + f];
          hw[at] += weights[i];
          hg[at] += weights[i] * grad[i];
        }
      }
      // One split for the whole level: the (feature, bin) with the largest gain summed over leaves.
      double best_gain = 1e-12;
      int best_f = -1, best_bin = -1;
      for (std::size_t f = 0; f < dims; ++f) {
        const std::size_t ne = edges[f].size();
        if (ne == 0) continue;
        std::fill(gain.begin(), gain.begin() + static_cast<long>(ne), 0.0);
        for (std::size_t l = 0; l < leaves; ++l) {
          const double* w = &hw[(l * dims + f) * nb];
          const double* g = &hg[(l * dims + f) * nb];
          double sw = 0, sg = 0;
          for (std::size_t b = 0; b <= ne; ++b) {
            sw += w[b];
            sg += g[b];
          }
          if (sw <= 0) continue;
          const double parent = sg * sg / (sw + opt.l2);
          double lw = 0, lg = 0;
          for (std::size_t b = 0; b < ne; ++b) {
            lw += w[b];
            lg += g[b];
            const double rw = sw - lw, rg = sg - lg;
            gain[b] += lg * lg / (lw + opt.l2) + rg * rg / (rw + opt.l2) - parent;
          }
        }
        for (std::size_t b = 0; b < ne; ++b)
          if (gain[b] > best_gain) {
            best_gain = gain[b];
            best_f = static_cast<int>(f);
            best_bin = static_cast<int>(b);
          }
      }
      if (best_f < 0) break;
      const auto f = static_cast<std::size_t>(best_f);
      tree.features.push_back(best_f);
      tree.thresholds.push_back(edges[f][static_cast<std::size_t>(best_bin)]);
      for (std::size_t i = 0; i < n; ++i)
        if (binned[i * dims + f] > best_bin) leaf[i] |= 1u << d;
    }
    if (tree.features.empty()) break;  // nothing left to learn
    const std::size_t leaves = std::size_t{1} << tree.features.size();
    std::vector<double> sw(leaves, 0.0), sg(leaves, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      sw[leaf[i]] += weights[i];
      sg[leaf[i]] += weights[i] * grad[i];
    }
    tree.leaves.resize(leaves);
    for (std::size_t l = 0; l < leaves; ++l) tree.leaves[l] = opt.learning_rate * sg[l] / (sw[l] + opt.l2);
    for (std::size_t i = 0; i < n; ++i) pred[i] += tree.leaves[leaf[i]];
    trees_.push_back(std::move(tree));
  }
  flatten();
}

// Every tree padded to the deepest one (a padded level compares against +inf: its bit is 0), so
// prediction is one fixed-trip loop.
void BoostedTrees::flatten() {
  int depth = 0;
  for (const Tree& t : trees_) depth = std::max(depth, static_cast<int>(t.features.size()));
  depth_ = depth;
  const auto levels = static_cast<std::size_t>(depth);
  flat_features_.assign(trees_.size() * levels, 0);
  flat_thresholds_.assign(trees_.size() * levels, std::numeric_limits<double>::infinity());
  flat_leaves_.assign(trees_.size() << levels, 0.0);
  for (std::size_t t = 0; t < trees_.size(); ++t) {
    const Tree& tree = trees_[t];
    std::copy(tree.features.begin(), tree.features.end(), flat_features_.begin() + static_cast<long>(t * levels));
    std::copy(tree.thresholds.begin(), tree.thresholds.end(),
              flat_thresholds_.begin() + static_cast<long>(t * levels));
    std::copy(tree.leaves.begin(), tree.leaves.end(), flat_leaves_.begin() + static_cast<long>(t << levels));
  }
}

double BoostedTrees::predict(const double* x, std::size_t trees) const {
  double y = base_;
  const std::size_t levels = static_cast<std::size_t>(depth_), count = std::min(trees, trees_.size());
  const std::int32_t* f = flat_features_.data();
  const double* thr = flat_thresholds_.data();
  const double* leaves = flat_leaves_.data();
  for (std::size_t t = 0; t < count; ++t, f += levels, thr += levels, leaves += std::size_t{1} << levels) {
    std::size_t idx = 0;
    for (std::size_t d = 0; d < levels; ++d) idx |= static_cast<std::size_t>(x[f[d]] > thr[d]) << d;
    y += leaves[idx];
  }
  return y;
}

void BoostedTrees::emit(YAML::Emitter& out) const {
  out << YAML::BeginMap;
  out << YAML::Key << "dims" << YAML::Value << dims_;
  out << YAML::Key << "base" << YAML::Value << base_;
  out << YAML::Key << "trees" << YAML::Value << YAML::BeginSeq;
  for (const Tree& tree : trees_) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "features" << YAML::Value << YAML::SingleQuoted << format_number_list(tree.features);
    out << YAML::Key << "thresholds" << YAML::Value << YAML::SingleQuoted << format_number_list(tree.thresholds);
    out << YAML::Key << "leaves" << YAML::Value << YAML::SingleQuoted << format_number_list(tree.leaves);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
}

BoostedTrees BoostedTrees::parse(const YAML::Node& node) {
  BoostedTrees bt;
  bt.dims_ = node["dims"].as<std::size_t>();
  bt.base_ = node["base"].as<double>();
  const YAML::Node trees = node["trees"];
  if (!trees || !trees.IsSequence()) throw std::runtime_error("residual trees: expected a 'trees' list");
  for (std::size_t i = 0; i < trees.size(); ++i) {
    const YAML::Node t = trees[i];
    const std::string where = "trees[" + std::to_string(i) + "]";
    Tree tree;
    for (const std::int64_t f : parse_int_list(t["features"], where + ".features")) {
      if (f < 0 || static_cast<std::uint64_t>(f) >= bt.dims_) throw std::runtime_error(where + ": tree feature out of range");
      tree.features.push_back(static_cast<std::int32_t>(f));
    }
    tree.thresholds = parse_double_list(t["thresholds"], where + ".thresholds");
    tree.leaves = parse_double_list(t["leaves"], where + ".leaves");
    const std::size_t depth = tree.features.size();
    if (depth == 0 || depth > static_cast<std::size_t>(kMaxDepth) || tree.thresholds.size() != depth ||
        tree.leaves.size() != (std::size_t{1} << depth))
      throw std::runtime_error(where + ": malformed tree (expected 1..8 features and thresholds and 2^depth leaves)");
    // Thresholds and leaf values finite: anything else is a damaged file.
    for (const double v : tree.thresholds)
      if (!std::isfinite(v)) throw std::runtime_error(where + ": malformed tree (non-finite threshold)");
    for (const double v : tree.leaves)
      if (!std::isfinite(v)) throw std::runtime_error(where + ": malformed tree (non-finite leaf value)");
    bt.trees_.push_back(std::move(tree));
  }
  bt.flatten();
  return bt;
}

}  // namespace ks::kernels
