#include "kernels/boosted_trees.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

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

  std::vector<double> pred(n, base_), grad(n);
  std::vector<std::size_t> index(n);
  for (int t = 0; t < opt.trees; ++t) {
    for (std::size_t i = 0; i < n; ++i) grad[i] = targets[i] - pred[i];
    std::iota(index.begin(), index.end(), 0);
    std::vector<Node> tree;
    // Recursive growth over index ranges [lo, hi).
    struct Task {
      std::size_t lo, hi;
      int depth, node;
    };
    tree.push_back({});
    std::vector<Task> stack{{0, n, 0, 0}};
    while (!stack.empty()) {
      const Task task = stack.back();
      stack.pop_back();
      double sw = 0, sg = 0;
      for (std::size_t j = task.lo; j < task.hi; ++j) {
        sw += weights[index[j]];
        sg += weights[index[j]] * grad[index[j]];
      }
      tree[static_cast<std::size_t>(task.node)].value = sg / (sw + opt.l2);
      if (task.depth >= opt.max_depth || sw < 2 * opt.min_leaf_weight) continue;

      const double parent_score = sg * sg / (sw + opt.l2);
      double best_gain = 1e-12;
      int best_f = -1, best_bin = -1;
      std::vector<double> hw(static_cast<std::size_t>(opt.bins) + 1), hg(static_cast<std::size_t>(opt.bins) + 1);
      for (std::size_t f = 0; f < dims; ++f) {
        std::fill(hw.begin(), hw.end(), 0.0);
        std::fill(hg.begin(), hg.end(), 0.0);
        for (std::size_t j = task.lo; j < task.hi; ++j) {
          const std::size_t i = index[j];
          hw[binned[i * dims + f]] += weights[i];
          hg[binned[i * dims + f]] += weights[i] * grad[i];
        }
        double lw = 0, lg = 0;
        const std::size_t nb = edges[f].size();
        for (std::size_t b = 0; b < nb; ++b) {
          lw += hw[b];
          lg += hg[b];
          const double rw = sw - lw, rg = sg - lg;
          if (lw < opt.min_leaf_weight || rw < opt.min_leaf_weight) continue;
          const double gain = lg * lg / (lw + opt.l2) + rg * rg / (rw + opt.l2) - parent_score;
          if (gain > best_gain) {
            best_gain = gain;
            best_f = static_cast<int>(f);
            best_bin = static_cast<int>(b);
          }
        }
      }
      if (best_f < 0) continue;
      const auto f = static_cast<std::size_t>(best_f);
      const auto mid = std::stable_partition(index.begin() + static_cast<long>(task.lo),
                                             index.begin() + static_cast<long>(task.hi), [&](std::size_t i) {
                                               return binned[i * dims + f] <= best_bin;
                                             });
      const std::size_t split = static_cast<std::size_t>(mid - index.begin());
      Node& node = tree[static_cast<std::size_t>(task.node)];
      node.feature = best_f;
      node.threshold = edges[f][static_cast<std::size_t>(best_bin)];
      const int left = static_cast<int>(tree.size());
      tree.push_back({});
      tree.push_back({});
      tree[static_cast<std::size_t>(task.node)].left = left;
      tree[static_cast<std::size_t>(task.node)].right = left + 1;
      stack.push_back({split, task.hi, task.depth + 1, left + 1});
      stack.push_back({task.lo, split, task.depth + 1, left});
    }
    for (auto& node : tree) node.value *= opt.learning_rate;
    trees_.push_back(std::move(tree));
    for (std::size_t i = 0; i < n; ++i) {
      const std::vector<Node>& tr = trees_.back();
      int k = 0;
      while (tr[static_cast<std::size_t>(k)].feature >= 0) {
        const Node& nd = tr[static_cast<std::size_t>(k)];
        k = rows[i * dims + static_cast<std::size_t>(nd.feature)] <= nd.threshold ? nd.left : nd.right;
      }
      pred[i] += tr[static_cast<std::size_t>(k)].value;
    }
  }
  flatten();
}

void BoostedTrees::flatten() {
  flat_.clear();
  roots_.clear();
  for (const auto& tree : trees_) {
    const auto offset = static_cast<std::int32_t>(flat_.size());
    roots_.push_back(offset);
    for (const Node& n : tree) {
      flat_.push_back({n.feature, n.feature >= 0 ? offset + n.left : -1, n.feature >= 0 ? n.threshold : n.value});
    }
  }
}

double BoostedTrees::predict(const double* x) const {
  double y = base_;
  const FlatNode* nodes = flat_.data();
  for (const std::int32_t root : roots_) {
    const FlatNode* n = nodes + root;
    while (n->feature >= 0) n = nodes + n->left + (x[n->feature] <= n->threshold ? 0 : 1);
    y += n->threshold;
  }
  return y;
}

void BoostedTrees::emit(YAML::Emitter& out) const {
  out << YAML::BeginMap;
  out << YAML::Key << "dims" << YAML::Value << dims_;
  out << YAML::Key << "base" << YAML::Value << base_;
  out << YAML::Key << "trees" << YAML::Value << YAML::BeginSeq;
  for (const auto& tree : trees_) {
    // One flow sequence per tree: [feature, threshold, left, right, value] per node.
    out << YAML::Flow << YAML::BeginSeq;
    for (const Node& n : tree) out << n.feature << n.threshold << n.left << n.right << n.value;
    out << YAML::EndSeq;
  }
  out << YAML::EndSeq << YAML::EndMap;
}

BoostedTrees BoostedTrees::parse(const YAML::Node& node) {
  BoostedTrees bt;
  bt.dims_ = node["dims"].as<std::size_t>();
  bt.base_ = node["base"].as<double>();
  for (const auto& t : node["trees"]) {
    const auto flat = t.as<std::vector<double>>();
    if (flat.size() % 5 != 0) throw std::runtime_error("malformed tree (expected 5 numbers per node)");
    std::vector<Node> tree(flat.size() / 5);
    // Indices are whole numbers, thresholds and values finite: anything else is a damaged file.
    auto index = [](double v) {
      if (!(v >= -1e9 && v <= 1e9) || v != std::floor(v)) throw std::runtime_error("malformed tree node (bad index)");
      return static_cast<int>(v);
    };
    for (std::size_t i = 0; i < tree.size(); ++i) {
      tree[i].feature = index(flat[5 * i]);
      tree[i].threshold = flat[5 * i + 1];
      tree[i].left = index(flat[5 * i + 2]);
      tree[i].right = index(flat[5 * i + 3]);
      tree[i].value = flat[5 * i + 4];
      if (!std::isfinite(tree[i].threshold) || !std::isfinite(tree[i].value))
        throw std::runtime_error("malformed tree node (non-finite threshold or value)");
      const int nn = static_cast<int>(tree.size());
      if (tree[i].feature >= static_cast<int>(bt.dims_) ||
          (tree[i].feature >= 0 && (tree[i].left <= static_cast<int>(i) || tree[i].right != tree[i].left + 1 ||
                                    tree[i].right >= nn)))
        throw std::runtime_error("malformed tree node");
    }
    bt.trees_.push_back(std::move(tree));
  }
  bt.flatten();
  return bt;
}

}  // namespace ks::kernels
