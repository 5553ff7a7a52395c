#pragma once
// Roofline kernel time: the slower of compute and HBM traffic, plus a launch latency.
// The learned-efficiency model plugs in through derated_cost(): it only supplies the two
// efficiencies; the roofline arithmetic stays here.
#include <cstddef>
#include <string_view>

#include "kernels/gpu_spec.hpp"
#include "kernels/kernel.hpp"
#include "kernels/kernel_cost.hpp"

namespace ks::kernels {

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

}  // namespace ks::kernels
