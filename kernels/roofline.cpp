#include "kernels/roofline.hpp"

#include <algorithm>
#include <stdexcept>

namespace ks::kernels {

KernelCost roofline_cost(const Kernel& kernel, const GpuSpec& gpu, double launch_overhead_s) {
  return derated_cost(kernel, gpu, launch_overhead_s, Efficiency{});
}

KernelCost derated_cost(const Kernel& kernel, const GpuSpec& gpu, double launch_overhead_s,
                        Efficiency eta) {
  if (is_collective(kernel.op)) return KernelCost{0.0, 0.0, 0.0, 0.0, Bound::Communication, 1.0};
  if (!(eta.compute > 0.0 && eta.compute <= 1.0 && eta.memory > 0.0 && eta.memory <= 1.0)) {
    throw std::invalid_argument("efficiencies must lie in (0, 1]");
  }
  if (!(gpu.hbm_bandwidth > 0.0)) {
    throw std::invalid_argument("GPU '" + gpu.name + "' has no HBM bandwidth");
  }
  // Kernels without FLOPs (embedding gather) never ask for a peak, so any dtype is fine there.
  const double peak = kernel.flops > 0.0 ? gpu.peak(kernel.dtype) : 1.0;
  const double ideal_compute = kernel.flops / peak;
  const double ideal_memory = kernel.bytes / gpu.hbm_bandwidth;
  KernelCost cost;
  cost.compute_seconds = ideal_compute / eta.compute;
  cost.memory_seconds = ideal_memory / eta.memory;
  cost.launch_seconds = launch_overhead_s;
  const double work = std::max(cost.compute_seconds, cost.memory_seconds);
  cost.seconds = work + launch_overhead_s;
  if (launch_overhead_s > work) {
    cost.bound = Bound::Launch;
  } else {
    cost.bound = cost.compute_seconds > cost.memory_seconds ? Bound::Compute : Bound::Memory;
  }
  cost.efficiency = work > 0.0 ? std::max(ideal_compute, ideal_memory) / work : 1.0;
  return cost;
}

double ridge_point(const GpuSpec& gpu, DType dtype) { return gpu.peak(dtype) / gpu.hbm_bandwidth; }

std::string_view bound_name(Bound bound) {
  switch (bound) {
    case Bound::Compute:
      return "compute";
    case Bound::Memory:
      return "memory";
    case Bound::Launch:
      return "launch";
    case Bound::Communication:
      return "communication";
    case Bound::Sm:
      return "sm";
    case Bound::Latency:
      return "latency";
  }
  return "unknown";
}

}  // namespace ks::kernels
