#pragma once
// Gradient-boosted regression trees (squared loss) on a handful of dense features: the learned
// residual of the parametric kernel model. Small on purpose: histogram splits over at most 255
// quantile bins, depth-limited trees, deterministic (no sampling), and prediction is a few
// hundred comparisons, so pricing stays above a million kernels per second. A library
// (xgboost) would train the same trees but cannot predict one row at this cost.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace YAML {
class Node;
class Emitter;
}  // namespace YAML

namespace ks::kernels {

struct BoostOptions {
  int trees = 80;
  int max_depth = 5;
  double learning_rate = 0.35;
  double min_leaf_weight = 10.0;  // sum of sample weights a leaf needs
  double l2 = 1.0;                // ridge on leaf values
  int bins = 255;  // at most 255: bin indices are bytes
};

class BoostedTrees {
 public:
  // rows: n x d features (row-major), targets and weights of length n.
  void fit(const std::vector<double>& rows, std::size_t dims, const std::vector<double>& targets,
           const std::vector<double>& weights, const BoostOptions& options = {});
  double predict(const double* x) const;
  bool empty() const { return trees_.empty(); }
  std::size_t dims() const { return dims_; }

  void emit(YAML::Emitter& out) const;
  static BoostedTrees parse(const YAML::Node& node);  // throws std::runtime_error

 private:
  struct Node {
    int feature = -1;  // -1: leaf
    double threshold = 0;
    int left = -1, right = -1;
    double value = 0;
  };
  // All trees in one contiguous array for prediction (children are stored next to each other,
  // so a node needs only its left child's index).
  struct FlatNode {
    std::int32_t feature;  // -1: leaf
    std::int32_t left;     // absolute index; right = left + 1
    double threshold;      // leaf: the value
  };
  void flatten();

  std::size_t dims_ = 0;
  double base_ = 0;
  std::vector<std::vector<Node>> trees_;
  std::vector<FlatNode> flat_;
  std::vector<std::int32_t> roots_;
};

}  // namespace ks::kernels
