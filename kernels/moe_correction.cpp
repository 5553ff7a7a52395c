#include "kernels/moe_correction.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/dtype.hpp"

namespace ks::kernels {

std::array<double, MoeGemmCorrection::kFeatures> MoeGemmCorrection::features(const Kernel& k) {
  const auto l2 = [](double v) { return std::log2(std::max(v, 1.0)); };
  const double experts = static_cast<double>(std::max<std::int64_t>(k.groups, 1));
  const double rows = static_cast<double>(k.m);
  return {l2(rows), std::log2(std::max(rows / experts, 1.0 / 64)), l2(static_cast<double>(k.n)),
          l2(static_cast<double>(k.k)), l2(experts), dtype_bytes(k.dtype) < 2.0 ? 1.0 : 0.0};
}

double MoeGemmCorrection::log_factor(const Kernel& k) const {
  if (trees.empty() || k.op != OpKind::MoeGemm) return 0.0;
  const auto x = features(k);
  return trees.predict(x.data());
}

}  // namespace ks::kernels
