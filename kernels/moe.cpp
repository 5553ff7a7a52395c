#include "kernels/moe.hpp"

#include <algorithm>
#include <cmath>

namespace ks::kernels {

double expected_experts_touched(int experts, int top_k, std::int64_t tokens) {
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0.0;
  const double e = experts;
  // P(a given expert is skipped by one token) = 1 - k/E; tokens route independently.
  const double untouched = std::pow(1.0 - std::min(1.0, top_k / e), static_cast<double>(tokens));
  return std::min(e * (1.0 - untouched), static_cast<double>(tokens) * top_k);
}

}  // namespace ks::kernels
