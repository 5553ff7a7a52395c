#pragma once
// What one kernel costs on a GPU: a plain value (the TLM contract carries it; proto/ includes this
// header, not the cost models that compute it: roofline.hpp, kernel_cost_model.hpp).
#include <cstddef>
#include <string_view>

namespace ks::kernels {

// Why a kernel takes its time. Communication: collectives, priced by the interconnect model
// (links), never by the roofline.
// Sm: the SMs' side of moving the bytes (load/store issue, latency not hidden by enough work in
// flight), which scales with SM count x clock, not with HBM bandwidth (learned tiers only).
// Latency: the chain of dependent iterations one CTA runs (a GEMM's K loop, attention's loop over
// keys), each a memory round trip of a number of cycles: it scales with the clock only.
enum class Bound { Compute, Memory, Launch, Communication, Sm, Latency };
constexpr std::size_t kNumBounds = 6;

struct KernelCost {
  double seconds;          // max(compute, memory) + launch
  double compute_seconds;  // flops / (peak * eta_compute)
  double memory_seconds;   // bytes / (hbm_bw * eta_memory)
  double launch_seconds;
  Bound bound;
  double efficiency;  // pure-roofline time / derated time, excluding launch; 1.0 for roofline
};

std::string_view bound_name(Bound bound);

}  // namespace ks::kernels
