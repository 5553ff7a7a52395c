#pragma once
// Kernel statistics as a GPU reports them: the sink the app hands to each GPU module (as Sparta's
// Unit registers its counters) and the rows it holds. kernels.csv and the summary's GPU time are
// read from the sinks, never from a GPU base class, so a GPU written only against the contract
// reports the same way (examples/contract_gpu).
//
// Work done by one kernel class (name, op kind and the batch phase it served), for reports.
// The sums are integers (picoseconds, FLOPs, bytes), so they are exact and order-free: n
// identical launches added one by one equal one add of n times the value. That is what lets a
// step launch account a layer once for all layers and still match per-kernel launches (`--exact`)
// bit for bit.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernel.hpp"
#include "kernels/kernel_cost.hpp"

namespace ks::proto {

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

// A row of kernels.csv: the kernel class and the batch phase it served.
struct KernelClassKey {
  std::string name;
  kernels::OpKind op;
  kernels::Phase phase;
  bool operator<(const KernelClassKey& o) const {
    return std::tie(name, phase, op) < std::tie(o.name, o.phase, o.op);
  }
};

// Where a GPU module adds the kernels it ran.
class KernelStatsSink {
 public:
  virtual ~KernelStatsSink() = default;
  // The row of a kernel class. A module may keep the reference: it stays valid, at the same
  // address, for the sink's lifetime.
  virtual KernelClassStats& row(const KernelClassKey& key) = 0;
  // A module that adds launches to its rows late (batched over steps) registers how to settle
  // them; the sink runs every such function before its rows are read.
  virtual void settle_before_reading(std::function<void()> settle) = 0;
};

// The sink the app gives each GPU: its rows, in key order.
class KernelStatsTable final : public KernelStatsSink {
 public:
  KernelClassStats& row(const KernelClassKey& key) override { return rows_[key]; }
  void settle_before_reading(std::function<void()> settle) override { settle_.push_back(std::move(settle)); }
  const std::map<KernelClassKey, KernelClassStats>& rows() const {
    for (const auto& settle : settle_) settle();
    return rows_;
  }
  // GPU time of every kernel (integer picoseconds: the same however the launches were added).
  double busy_seconds() const {
    std::int64_t ps = 0;
    for (const auto& [key, s] : rows()) ps += s.busy_ps;
    return static_cast<double>(ps) * 1e-12;
  }
  std::uint64_t launches() const {
    std::uint64_t n = 0;
    for (const auto& [key, s] : rows()) n += s.launches;
    return n;
  }

 private:
  std::map<KernelClassKey, KernelClassStats> rows_;
  std::vector<std::function<void()>> settle_;
};

}  // namespace ks::proto
