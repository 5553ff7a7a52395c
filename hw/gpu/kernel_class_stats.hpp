#pragma once
// Work done by one kernel class (op kind and name, optionally split by phase), for reports.
// The sums are integers (picoseconds, FLOPs, bytes), so they are exact and order-free: n
// identical launches added one by one equal one add of n times the value. That is what lets a
// step launch account a layer once for all layers and still match per-kernel launches (`--exact`)
// bit for bit.
#include <array>
#include <cstdint>

#include "kernels/kernel.hpp"
#include "kernels/roofline.hpp"

namespace ks::hw {

// 128-bit counters: a long run's FLOPs (10^21 and more) overflow 64 bits.
__extension__ using WideCount = unsigned __int128;

// Non-negative x to the nearest integer, halves up (inline: libm's llround is a call per kernel).
inline std::int64_t round_count(double x) { return static_cast<std::int64_t>(x + 0.5); }
// Seconds to whole picoseconds (the SystemC time resolution the simulator runs at).
inline std::int64_t to_picoseconds(double seconds) { return round_count(seconds * 1e12); }

struct KernelClassStats {
  std::uint64_t launches = 0;
  std::array<std::uint64_t, kernels::kNumBounds> bound_counts{};  // by kernels::Bound
  std::int64_t busy_ps = 0;
  std::int64_t roofline_ps = 0;  // pure-roofline time of the same work (no launch, efficiency 1)
  WideCount flop_count = 0;
  WideCount byte_count = 0;

  double busy_seconds() const { return static_cast<double>(busy_ps) * 1e-12; }
  double roofline_seconds() const { return static_cast<double>(roofline_ps) * 1e-12; }
  double flops() const { return static_cast<double>(flop_count); }
  double bytes() const { return static_cast<double>(byte_count); }

  // `count` launches of `kernel`, each taking `cost`.
  void add(const kernels::Kernel& kernel, const kernels::KernelCost& cost, std::uint64_t count) {
    launches += count;
    bound_counts[static_cast<std::size_t>(cost.bound)] += count;
    const auto n = static_cast<std::int64_t>(count);
    busy_ps += to_picoseconds(cost.seconds) * n;
    roofline_ps += to_picoseconds((cost.seconds - cost.launch_seconds) * cost.efficiency) * n;
    flop_count += static_cast<WideCount>(round_count(kernel.flops)) * count;
    byte_count += static_cast<WideCount>(round_count(kernel.bytes)) * count;
  }

  void merge(const KernelClassStats& o) {
    launches += o.launches;
    for (std::size_t i = 0; i < bound_counts.size(); ++i) bound_counts[i] += o.bound_counts[i];
    busy_ps += o.busy_ps;
    roofline_ps += o.roofline_ps;
    flop_count += o.flop_count;
    byte_count += o.byte_count;
  }
};

}  // namespace ks::hw
