#pragma once
// Expected load of a mixture-of-experts layer for one step, under the assumption the router
// spreads tokens uniformly (the load-balancing loss trains it towards that): what the grouped
// expert GEMMs of kernels/step_decomposer.cpp are priced with.
#include <cstdint>

namespace ks::kernels {

// Expected number of distinct experts that receive at least one of `tokens` tokens when each
// token picks `top_k` distinct experts out of `experts` uniformly at random:
// E * (1 - (1 - k/E)^T). Equals k for one token, tends to E (never above min(E, T*k)).
// Only these experts' weights are read from HBM.
double expected_experts_touched(int experts, int top_k, std::int64_t tokens);

}  // namespace ks::kernels
