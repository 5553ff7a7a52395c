#pragma once
// The cost of a kernel on one GPU in the chosen tier, memoised: engine steps repeat the same
// kernel shapes (every decode step of a batch size, every layer), so most calls are a lookup.
// The memo is a fixed-size direct-mapped cache, not a growing map: attention kernels carry the
// batch's context lengths, so their keys rarely repeat, and a map grew with them (allocation,
// page faults, cache misses). A colliding shape simply overwrites the slot; costs are pure
// functions of the key, so results never depend on what the cache holds. GPUs that price alike
// share one model, and so one memo (shared_cost_model.hpp).
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/efficiency_model.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/kernel.hpp"
#include "kernels/tiers.hpp"

namespace ks::kernels {

class KernelCostModel {
 public:
  // Roofline: eta = 1 plus `roofline_launch_s`. Other tiers: the efficiency model (which has its
  // own latency floor).
  KernelCostModel(Tier tier, GpuSpec gpu, std::shared_ptr<const EfficiencyModel> model, double roofline_launch_s);
  // `gpu` is a what-if variant of `calibrated` (the GPU the model's residual was learned on):
  // the residual is read at `calibrated`, the bounds at `gpu` (EfficiencyModel::cost).
  void set_calibrated_gpu(GpuSpec calibrated);
  // Multiplies every kernel of a class by scales[class] (1 = as predicted): a what-if on the
  // kernel model itself, and how `run --intervals` samples its uncertainty.
  void set_time_scales(const std::array<double, kNumKernelClasses>& scales);

  KernelCost cost(const Kernel& kernel) const;
  // Starts loading the memo slot cost(kernel) will read: a step's kernels, announced together,
  // wait for memory once instead of once each (the table outgrows the core's caches between
  // steps whose batch size changes). cost() computes the hash again: a few multiplies against a
  // memory stall (measured in docs/performance.md).
  void prefetch(const Kernel& kernel) const;
  // Off: every call prices the kernel afresh (the `--exact` reference; results are the same).
  void set_memoise(bool on) { memoise_ = on; }
  bool memoise() const { return memoise_; }
  Tier tier() const { return tier_; }
  const GpuSpec& gpu() const { return gpu_; }
  std::uint64_t lookups() const { return lookups_; }
  std::uint64_t misses() const { return misses_; }
  // Gives every kernel the same price as `other` does: same tier, GPU, calibrated GPU, model,
  // launch cost, time scales and memoisation.
  bool prices_like(const KernelCostModel& other) const;

 private:
  // One cache line: a lookup that misses (most attention kernels) reads nothing else. Heads
  // beyond 32 bits are not memoised (cost() prices them directly).
  struct Key {
    std::int64_t m, n, k, batch;
    double flops, bytes;
    std::int32_t heads, kv_heads;
    std::uint8_t op, dtype;
    bool used;
    bool operator==(const Key& o) const {
      return m == o.m && n == o.n && k == o.k && batch == o.batch && flops == o.flops && bytes == o.bytes &&
             heads == o.heads && kv_heads == o.kv_heads && op == o.op && dtype == o.dtype && used == o.used;
    }
  };
  static_assert(sizeof(Key) <= 64, "a memo key fills one cache line");
  struct alignas(64) Slot {
    Key key{};
    KernelCost cost{};
  };
  static std::uint64_t hash(const Key& key);
  static bool memo_key(const Kernel& kernel, Key& key);  // false: heads beyond 32 bits
  static constexpr std::size_t kSlots = 1 << 13;  // 1 MB: stays in L2

  Tier tier_;
  GpuSpec gpu_;
  std::unique_ptr<const GpuSpec> calibrated_;  // null: gpu_ is the calibrated GPU itself
  std::shared_ptr<const EfficiencyModel> model_;
  double roofline_launch_s_;
  std::array<double, kNumKernelClasses> scales_;
  bool scaled_ = false;
  KernelCost price(const Kernel& kernel) const;
  mutable std::vector<Slot> memo_;  // kSlots entries, allocated on first use
  // Decode attention carries the batch's summed context, so its key almost never repeats from
  // one step to the next: in the table it would only evict shapes that do repeat (the GEMMs of
  // each batch size). Its own slot serves the ranks of a TP group pricing the same kernel in turn.
  mutable Slot decode_attention_;
  mutable std::uint64_t lookups_ = 0, misses_ = 0;
  bool memoise_ = true;
};

}  // namespace ks::kernels
