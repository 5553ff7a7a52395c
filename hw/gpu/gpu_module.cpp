#include "hw/gpu/gpu_module.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace ks::hw {

GpuModule::GpuModule(const sc_core::sc_module_name& name, int device_id)
    : sc_core::sc_module(name), socket("socket"), device_id_(device_id) {
  socket.register_b_transport(this, &GpuModule::b_transport);
  trace_tracks_.fill(-1);
}

sc_core::sc_time GpuModule::stream_free_at(int stream) const {
  if (stream >= 0) return stream_free_.at(static_cast<std::size_t>(stream));
  return *std::max_element(stream_free_.begin(), stream_free_.end());
}

void GpuModule::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const sc_core::sc_time issue = sc_core::sc_time_stamp() + delay;
  if (auto* k = payload.get_extension<proto::KernelLaunch>()) {
    if (k->stream < 0 || k->stream >= kMaxStreams || k->repeat < 1) {
      payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    launch(*k, issue);  // asynchronous: the launcher's time does not move
  } else if (auto* st = payload.get_extension<proto::StepLaunch>()) {
    if (st->stream < 0 || st->stream >= kMaxStreams || st->kernels == nullptr) {
      payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    launch_step(*st, issue);
  } else if (auto* s = payload.get_extension<proto::Synchronize>()) {
    const sc_core::sc_time done = stream_free_at(s->stream);
    if (done > issue) delay += done - issue;
  } else if (auto* w = payload.get_extension<proto::StreamWait>()) {
    if (w->stream < 0 || w->stream >= kMaxStreams) {
      payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    auto& free_at = stream_free_[static_cast<std::size_t>(w->stream)];
    free_at = std::max(free_at, w->until);
  } else {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

std::size_t GpuModule::SlotKeyHash::operator()(const SlotKey& k) const {
  return std::hash<const void*>()(k.name) ^ (static_cast<std::size_t>(k.op) << 8) ^
         (static_cast<std::size_t>(k.phase) << 16);
}

GpuModule::StatsSlots GpuModule::slots_for(const kernels::Kernel& kernel) {
  const SlotKey key{kernel.name, kernel.op, kernel.phase};
  if (auto it = slots_.find(key); it != slots_.end()) return it->second;
  // std::map nodes never move, so the pointers stay valid.
  const StatsSlots slots{&stats_[kernel.name], &phase_stats_[{kernel.name, kernel.op, kernel.phase}]};
  slots_.emplace(key, slots);
  return slots;
}

void GpuModule::account(const kernels::Kernel& kernel, const kernels::KernelCost& cost, int repeat,
                        const StatsSlots& slots) {
  const auto n = static_cast<std::uint64_t>(repeat);
  busy_ps_ += to_picoseconds(cost.seconds) * repeat;
  kernels_executed_ += n;
  slots.by_class->add(kernel, cost, n);
  slots.by_phase->add(kernel, cost, n);
}

void GpuModule::launch(proto::KernelLaunch& k, const sc_core::sc_time& issue_time) {
  k.cost = kernel_cost(k.kernel);
  auto& free_at = stream_free_[static_cast<std::size_t>(k.stream)];
  k.start = std::max(issue_time, free_at);
  const double total = k.cost.seconds * k.repeat;
  k.finish = k.start + sc_core::sc_time(total, sc_core::SC_SEC);
  free_at = k.finish;
  account(k.kernel, k.cost, k.repeat, slots_for(k.kernel));
  if (trace_ != nullptr) trace_kernel(k);
}

void GpuModule::trace_kernel(const proto::KernelLaunch& k) {
  int& track = trace_tracks_[static_cast<std::size_t>(k.stream)];
  if (track < 0) track = trace_->track(trace_process_, "stream " + std::to_string(k.stream));
  std::string args;  // what a performance engineer asks of one kernel; built only when shown
  if (trace_->detailed(k.step)) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{\"step\":%llu,\"layer\":%d,\"repeat\":%d,\"flops\":%.6e,\"bytes\":%.6e,\"bound\":\"%s\","
                  "\"efficiency\":%.4f}",
                  static_cast<unsigned long long>(k.step), k.layer, k.repeat, k.kernel.flops, k.kernel.bytes,
                  std::string(kernels::bound_name(k.cost.bound)).c_str(), k.cost.efficiency);
    args = buf;
  }
  // sc_time values are picoseconds (sim::setup_kernel fixes the resolution).
  trace_->kernel(track, k.step, k.kernel.name, kernels::phase_name(k.kernel.phase), k.start.value(),
                 k.finish.value(), args);
}

void GpuModule::price(const std::vector<kernels::Kernel>& kernels, std::vector<PricedKernel>& out) {
  out.clear();
  for (const kernels::Kernel& kernel : kernels) {
    const kernels::KernelCost cost = kernel_cost(kernel);
    // The same rounding as sc_time(seconds, SC_SEC) at the 1 ps resolution, without its library call.
    const auto duration = sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(to_picoseconds(cost.seconds)));
    out.push_back({&kernel, cost, duration, slots_for(kernel)});
  }
}

// The same stream timing as one launch per kernel, without walking every layer. A stream is a
// max-plus recurrence: kernel i finishes at f_i = max(t_i, f_{i-1}) + d_i with issue times
// t_i = t0 + (i + 1) L. Over one layer of P kernels this is f_out = max(f_in + D, b + A), where
// D is the layer's GPU time, b the layer's base issue time and A = max_j((j + 1) L + d_j + ... +
// d_{P-1}). Layer l has base b_0 + l P L, so after n layers the latest of the n issue terms is
// the first layer's (P L <= D: GPU-bound) or the last one's (launch-bound). Integer picoseconds
// throughout, so the result is exactly the per-kernel one. Statistics are added in the same
// statistics are exact integer sums, so kernels.csv is identical too.
void GpuModule::launch_step(proto::StepLaunch& st, const sc_core::sc_time& issue_time) {
  const kernels::StepKernels& step = *st.kernels;
  price(step.pre, pre_);
  price(step.per_layer, layer_);
  price(step.post, post_);
  const sc_core::sc_time L = st.launch_overhead;
  auto& free_at = stream_free_[static_cast<std::size_t>(st.stream)];
  sc_core::sc_time issued = issue_time;  // issue time of the last kernel so far
  sc_core::sc_time f = free_at;
  auto run_one = [&](const PricedKernel& p) {
    issued += L;
    f = std::max(issued, f) + p.duration;
  };
  for (const PricedKernel& p : pre_) run_one(p);

  const int n = step.num_layers;
  if (n > 0 && !layer_.empty()) {
    const std::size_t P = layer_.size();
    sc_core::sc_time D = sc_core::SC_ZERO_TIME, A = sc_core::SC_ZERO_TIME, suffix = sc_core::SC_ZERO_TIME;
    for (std::size_t j = P; j-- > 0;) {
      suffix += layer_[j].duration;
      A = std::max(A, L * static_cast<double>(j + 1) + suffix);
    }
    D = suffix;
    const sc_core::sc_time layer_launch = L * static_cast<double>(P);
    const sc_core::sc_time b0 = issued;
    const int latest = layer_launch <= D ? 0 : n - 1;  // the layer whose issue term dominates
    const sc_core::sc_time from_issue =
        b0 + layer_launch * static_cast<double>(latest) + A + D * static_cast<double>(n - 1 - latest);
    f = std::max(f + D * static_cast<double>(n), from_issue);
    issued = b0 + layer_launch * static_cast<double>(n);
  }
  for (const PricedKernel& p : post_) run_one(p);
  free_at = f;
  st.finish = f;

  // Integer statistics: one add of n launches per layer kernel equals n separate launches.
  for (const PricedKernel& p : pre_) account(*p.kernel, p.cost, 1, p.slots);
  if (n > 0)
    for (const PricedKernel& p : layer_) account(*p.kernel, p.cost, n, p.slots);
  for (const PricedKernel& p : post_) account(*p.kernel, p.cost, 1, p.slots);
}

}  // namespace ks::hw
