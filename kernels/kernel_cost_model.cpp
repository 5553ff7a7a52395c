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

std::uint64_t KernelCostModel::hash(const Key& key) {
  auto mix = [](std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ULL; };
  std::uint64_t h = 0xcbf29ce484222325ULL;
  h = mix(h, static_cast<std::uint64_t>(key.op));
  h = mix(h, static_cast<std::uint64_t>(key.dtype));
  h = mix(h, static_cast<std::uint64_t>(key.m));
  h = mix(h, static_cast<std::uint64_t>(key.n));
  h = mix(h, static_cast<std::uint64_t>(key.k));
  h = mix(h, static_cast<std::uint64_t>(key.batch));
  h = mix(h, static_cast<std::uint64_t>(key.heads));
  h = mix(h, static_cast<std::uint64_t>(key.kv_heads));
  std::uint64_t bits;
  std::memcpy(&bits, &key.bytes, sizeof bits);
  h = mix(h, bits);
  std::memcpy(&bits, &key.flops, sizeof bits);
  h = mix(h, bits);
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

bool KernelCostModel::memo_key(const Kernel& kernel, Key& key) {
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
