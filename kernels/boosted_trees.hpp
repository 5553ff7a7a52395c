#pragma once
// Gradient-boosted oblivious regression trees (squared loss) on a handful of dense features: the
// learned residual of the parametric kernel model. An oblivious tree asks the same question
// (feature <= threshold) of every node of a level, so a tree of depth D is D comparisons that
// form the index of one of 2^D leaves: prediction is branch-free (a few tens of nanoseconds for
// a hundred trees, so pricing stays above a million kernels per second), and the shared splits
// regularise, a tree cannot carve a leaf around one shape. Histogram splits over at most 255
// quantile bins, deterministic (no sampling). A library (xgboost) would train similar trees but
// cannot predict one row at this cost.
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
  int trees = 100;
  int depth = 6;                 // levels per tree: 2^depth leaves
  double learning_rate = 0.2;
  double l2 = 1.0;               // ridge on leaf values (in units of sample weight)
  int bins = 255;  // at most 255: bin indices are bytes
};

class BoostedTrees {
 public:
  static constexpr int kMaxDepth = 8;

  // rows: n x d features (row-major), targets and weights of length n.
  void fit(const std::vector<double>& rows, std::size_t dims, const std::vector<double>& targets,
           const std::vector<double>& weights, const BoostOptions& options = {});
  double predict(const double* x) const { return predict(x, trees_.size()); }
  // The prediction of the first `trees` trees alone (as if fitted with that many).
  double predict(const double* x, std::size_t trees) const;
  bool empty() const { return trees_.empty(); }
  std::size_t dims() const { return dims_; }
  std::size_t size() const { return trees_.size(); }

  void emit(YAML::Emitter& out) const;
  static BoostedTrees parse(const YAML::Node& node);  // throws std::runtime_error

 private:
  struct Tree {
    std::vector<std::int32_t> features;  // one per level
    std::vector<double> thresholds;      // one per level: bit d of the leaf index is x[f_d] > t_d
    std::vector<double> leaves;          // 2^depth values
  };
  // Every tree's levels and leaves in contiguous arrays for prediction.
  void flatten();

  std::size_t dims_ = 0;
  double base_ = 0;
  std::vector<Tree> trees_;
  std::vector<std::int32_t> flat_features_;
  std::vector<double> flat_thresholds_;
  std::vector<double> flat_leaves_;
  int depth_ = 0;
};

}  // namespace ks::kernels
