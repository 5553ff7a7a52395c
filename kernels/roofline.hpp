#pragma once
// Roofline kernel time: the slower of compute and HBM traffic, plus a launch latency.
// The learned-efficiency model plugs in through derated_cost(): it only supplies the two
// efficiencies; the roofline arithmetic stays here.
#include <cstddef>
#include <string_view>

#include "kernels/gpu_spec.hpp"
#include "kernels/kernel.hpp"

namespace ks::kernels {

// Communication: collectives, priced by the interconnect model (links), never by this file.
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

// Fractions of peak FLOP/s and HBM bandwidth a kernel achieves, in (0, 1].
struct Efficiency {
  double compute = 1.0;
  double memory = 1.0;
};

// seconds = max(flops / peak(dtype), bytes / hbm_bw) + launch_overhead_s. Bound::Launch when the
// launch term exceeds both. Collectives (AllReduce, AllGather) cost 0 here and are marked
// Bound::Communication: the hardware links model them. Throws std::invalid_argument if the GPU
// lacks a peak for the kernel's dtype (only asked when the kernel has FLOPs).
KernelCost roofline_cost(const Kernel& kernel, const GpuSpec& gpu, double launch_overhead_s);

// The same with derated peaks: t = max(flops / (peak * eta_c), bytes / (bw * eta_m)) + launch.
KernelCost derated_cost(const Kernel& kernel, const GpuSpec& gpu, double launch_overhead_s,
                        Efficiency eta);

// Arithmetic intensity (FLOP/B) at which compute and memory time are equal for dtype.
double ridge_point(const GpuSpec& gpu, DType dtype);

std::string_view bound_name(Bound bound);

}  // namespace ks::kernels
