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

void GpuModule::launch(proto::KernelLaunch& k, const sc_core::sc_time& issue_time) {
  k.cost = kernel_cost(k.kernel);
  auto& free_at = stream_free_[static_cast<std::size_t>(k.stream)];
  k.start = std::max(issue_time, free_at);
  const double total = k.cost.seconds * k.repeat;
  k.finish = k.start + sc_core::sc_time(total, sc_core::SC_SEC);
  free_at = k.finish;

  busy_seconds_ += total;
  kernels_executed_ += static_cast<std::uint64_t>(k.repeat);
  KernelClassStats& s = stats_[k.kernel.name];
  s.launches += static_cast<std::uint64_t>(k.repeat);
  s.busy_seconds += total;
  s.flops += k.kernel.flops * k.repeat;
  s.bytes += k.kernel.bytes * k.repeat;
  s.bound_counts[static_cast<std::size_t>(k.cost.bound)] += static_cast<std::uint64_t>(k.repeat);
  s.roofline_seconds += (k.cost.seconds - k.cost.launch_seconds) * k.cost.efficiency * k.repeat;
  KernelClassStats& p = phase_stats_[{k.kernel.name, k.kernel.op, k.kernel.phase}];
  p.launches += static_cast<std::uint64_t>(k.repeat);
  p.busy_seconds += total;
  p.flops += k.kernel.flops * k.repeat;
  p.bytes += k.kernel.bytes * k.repeat;
  p.bound_counts[static_cast<std::size_t>(k.cost.bound)] += static_cast<std::uint64_t>(k.repeat);
  p.roofline_seconds += (k.cost.seconds - k.cost.launch_seconds) * k.cost.efficiency * k.repeat;

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

}  // namespace ks::hw
