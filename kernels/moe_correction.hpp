#pragma once
// A learned correction of grouped expert GEMMs (OpKind::MoeGemm), fitted on whole MoE layers as
// one engine runs them on one GPU (kernels/moe_layer.hpp, kernels/moe_fit.hpp). Without it an
// expert GEMM is priced as a dense GEMM of the same rows and weights; engines' fused MoE kernels
// differ from that by shape (tiles half empty when TP splits an expert narrow, kernel choices by
// token count), by how much depending on the engine and GPU (docs/kernel-model.md, "MoE layers").
// The correction multiplies the GEMM class's time: read at the spec it was learned on, it leaves
// every spec change to move an expert GEMM the way its bound says.
#include <array>
#include <cstddef>

#include "kernels/boost_selection.hpp"
#include "kernels/boosted_trees.hpp"
#include "kernels/kernel.hpp"

namespace ks::kernels {

struct MoeGemmCorrection {
  // log2 of: the rows (summed over experts), the rows per touched expert, N, K and the experts
  // touched; 1 for an 8-bit or narrower GEMM, else 0.
  static constexpr std::size_t kFeatures = 6;
  static std::array<double, kFeatures> features(const Kernel& k);

  BoostedTrees trees;       // log factor; empty: no correction
  BoostSelection selection;  // the trees' settings, chosen by cross-validation over layer families
  double uncorrected_cv_mape = 0;  // the same folds' error without a correction, %
  std::size_t layers = 0;    // MoE layer measurements fitted
  std::size_t skipped = 0;   // left out: their expert GEMMs, as attributed, under a quarter of the time

  bool empty() const { return trees.empty(); }
  // log of the factor a MoeGemm kernel's time is multiplied by (0: none, or not a MoeGemm).
  double log_factor(const Kernel& k) const;
};

}  // namespace ks::kernels
