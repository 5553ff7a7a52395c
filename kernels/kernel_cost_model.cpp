#include "kernels/kernel_cost_model.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ks::kernels {

KernelCostModel::KernelCostModel(Tier tier, GpuSpec gpu, std::shared_ptr<const EfficiencyModel> model,
                                 double roofline_launch_s)
    : tier_(tier), gpu_(std::move(gpu)), model_(std::move(model)), roofline_launch_s_(roofline_launch_s) {
  if (tier_ != Tier::Roofline && !model_) throw std::invalid_argument("a learned tier needs an efficiency model");
  scales_.fill(1.0);
}

void KernelCostModel::set_calibrated_gpu(GpuSpec calibrated) {
  calibrated_ = std::make_unique<const GpuSpec>(std::move(calibrated));
  memo_.clear();
}

inline std::uint64_t KernelCostModel::hash(const Key& key) {
  // Independent products summed, then mixed: no chain of dependent multiplies per lookup. Only
  // the slot depends on it (a collision costs a repricing, never a wrong price).
  auto bits = [](double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
  };
  auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  std::uint64_t h = u(key.m) * 0x9e3779b97f4a7c15ULL + u(key.n) * 0xc2b2ae3d27d4eb4fULL +
                    u(key.k) * 0x165667b19e3779f9ULL + u(key.batch) * 0xd6e8feb86659fd93ULL +
                    bits(key.flops) * 0xff51afd7ed558ccdULL + bits(key.bytes) * 0xc4ceb9fe1a85ec53ULL +
                    (static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.heads)) |
                     static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.kv_heads)) << 32) *
                        0x94d049bb133111ebULL +
                    (static_cast<std::uint64_t>(key.op) | static_cast<std::uint64_t>(key.dtype) << 8) *
                        0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
  h *= 0x2545f4914f6cdd1dULL;
  return h ^ (h >> 29);  // the slot index uses the low bits
}

KernelCost KernelCostModel::price(const Kernel& kernel) const {
  KernelCost c = tier_ == Tier::Roofline ? roofline_cost(kernel, gpu_, roofline_launch_s_)
                                         : model_->cost(kernel, gpu_, calibrated_.get());
  KernelClass cls;
  if (scaled_ && kernel_class(kernel.op, &cls)) {
    const double s = scales_[static_cast<std::size_t>(cls)];
    c.seconds *= s;
    c.compute_seconds *= s;
    c.memory_seconds *= s;
    c.launch_seconds *= s;
    c.efficiency /= s;
  }
  return c;
}

void KernelCostModel::set_time_scales(const std::array<double, kNumKernelClasses>& scales) {
  scales_ = scales;
  scaled_ = std::any_of(scales.begin(), scales.end(), [](double s) { return s != 1.0; });
  memo_.clear();
}

bool KernelCostModel::prices_like(const KernelCostModel& o) const {
  const bool same_calibrated =
      calibrated_ == nullptr || o.calibrated_ == nullptr ? calibrated_ == o.calibrated_ : *calibrated_ == *o.calibrated_;
  // Models are compared by identity: calibration_store caches each file's model for the process.
  return tier_ == o.tier_ && gpu_ == o.gpu_ && same_calibrated && model_ == o.model_ &&
         roofline_launch_s_ == o.roofline_launch_s_ && scales_ == o.scales_ && memoise_ == o.memoise_;
}

inline bool KernelCostModel::memo_key(const Kernel& kernel, Key& key) {
  if (kernel.heads != static_cast<std::int32_t>(kernel.heads) ||
      kernel.kv_heads != static_cast<std::int32_t>(kernel.kv_heads))
    return false;
  key = Key{kernel.m,     kernel.n,     kernel.k,
            kernel.batch, kernel.flops, kernel.bytes,
            static_cast<std::int32_t>(kernel.heads), static_cast<std::int32_t>(kernel.kv_heads),
            static_cast<std::uint8_t>(kernel.op), static_cast<std::uint8_t>(kernel.dtype), true};
  return true;
}

void KernelCostModel::prefetch(const Kernel& kernel) const {
  Key key;
  if (!memoise_ || memo_.empty() || kernel.op == OpKind::AttentionDecode || !memo_key(kernel, key)) return;
  __builtin_prefetch(&memo_[hash(key) & (kSlots - 1)]);
}

KernelCost KernelCostModel::cost(const Kernel& kernel) const {
  ++lookups_;
  Key key;
  if (!memoise_ || !memo_key(kernel, key)) {
    ++misses_;
    return price(kernel);
  }
  if (memo_.empty()) memo_.resize(kSlots);
  Slot& slot = kernel.op == OpKind::AttentionDecode ? decode_attention_ : memo_[hash(key) & (kSlots - 1)];
  if (slot.key == key) return slot.cost;
  ++misses_;
  const KernelCost c = price(kernel);
  slot.key = key;
  slot.cost = c;
  return c;
}

}  // namespace ks::kernels
