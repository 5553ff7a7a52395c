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
  struct Key {
    OpKind op;
    DType dtype;
    std::int64_t m, n, k, batch, heads, kv_heads;
    double flops, bytes;
    bool operator==(const Key& o) const {
      return op == o.op && dtype == o.dtype && m == o.m && n == o.n && k == o.k && batch == o.batch &&
             heads == o.heads && kv_heads == o.kv_heads && flops == o.flops && bytes == o.bytes;
    }
  };
  struct Slot {
    Key key;
    KernelCost cost;
    bool used = false;
  };
  static std::uint64_t hash(const Key& key);
  static constexpr std::size_t kSlots = 1 << 13;  // ~0.8 MB: stays in L2

  Tier tier_;
  GpuSpec gpu_;
  std::unique_ptr<const GpuSpec> calibrated_;  // null: gpu_ is the calibrated GPU itself
  std::shared_ptr<const EfficiencyModel> model_;
  double roofline_launch_s_;
  std::array<double, kNumKernelClasses> scales_;
  bool scaled_ = false;
  KernelCost price(const Kernel& kernel) const;
  mutable std::vector<Slot> memo_;  // kSlots entries, allocated on first use
  mutable std::uint64_t lookups_ = 0, misses_ = 0;
  bool memoise_ = true;
};

}  // namespace ks::kernels
