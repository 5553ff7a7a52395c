#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "kernels/boosted_trees.hpp"

using ks::kernels::BoostedTrees;

// y = 0.5 a + 0.1 floor(b / 10): additive, with a staircase in b, over two features of very
// different cardinality (the case that once exposed a binning bug).
TEST(BoostedTrees, FitsAnAdditiveStaircase) {
  std::vector<double> rows, y, w;
  for (int i = 0; i < 8000; ++i) {
    const double a = i % 7, b = (i * 37 % 1000) / 10.0;
    rows.push_back(a);
    rows.push_back(b);
    y.push_back(0.5 * a + 0.1 * std::floor(b / 10.0));
    w.push_back(1.0);
  }
  BoostedTrees bt;
  bt.fit(rows, 2, y, w);
  double err = 0;
  for (std::size_t i = 0; i < y.size(); ++i) err += std::fabs(bt.predict(&rows[2 * i]) - y[i]);
  EXPECT_LT(err / y.size(), 0.01);

  // Saved and parsed again, it predicts the same numbers.
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  bt.emit(out);
  const BoostedTrees again = BoostedTrees::parse(YAML::Load(out.c_str()));
  for (std::size_t i = 0; i < 100; ++i) EXPECT_DOUBLE_EQ(again.predict(&rows[2 * i]), bt.predict(&rows[2 * i]));
}

TEST(BoostedTrees, RejectsMalformedTrees) {
  // A valid tree of depth 1 parses and predicts its leaves.
  const BoostedTrees ok = BoostedTrees::parse(
      YAML::Load("{dims: 1, base: 0.5, trees: [{features: [0], thresholds: [2.0], leaves: [-1.0, 1.0]}]}"));
  const double lo = 1.0, hi = 3.0;
  EXPECT_DOUBLE_EQ(ok.predict(&lo), -0.5);
  EXPECT_DOUBLE_EQ(ok.predict(&hi), 1.5);
  // Leaves must number 2^depth, features must exist, levels must have a threshold each.
  EXPECT_THROW(BoostedTrees::parse(YAML::Load("{dims: 1, base: 0, trees: [{features: [0], thresholds: [1.0], "
                                              "leaves: [1.0]}]}")),
               std::runtime_error);
  EXPECT_THROW(BoostedTrees::parse(YAML::Load("{dims: 1, base: 0, trees: [{features: [1], thresholds: [1.0], "
                                              "leaves: [1.0, 2.0]}]}")),
               std::runtime_error);
  EXPECT_THROW(BoostedTrees::parse(YAML::Load("{dims: 1, base: 0, trees: [{features: [0, 0], thresholds: [1.0], "
                                              "leaves: [1.0, 2.0, 3.0, 4.0]}]}")),
               std::runtime_error);
}
