#include "hw/gpu/base_protocol_gpu.hpp"

#include <algorithm>

namespace ks::hw {

BaseProtocolGpu::BaseProtocolGpu(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
  socket.register_b_transport(this, &BaseProtocolGpu::b_transport);
}

bool BaseProtocolGpu::run_kernel(const proto::KernelLaunch& launch, sc_core::sc_time start, sc_core::sc_time& finish) {
  KernelDescriptor d;
  d.flops = launch.kernel.flops;
  d.bytes = launch.kernel.bytes;
  d.m = launch.kernel.m, d.n = launch.kernel.n, d.k = launch.kernel.k;
  d.op = static_cast<std::uint32_t>(launch.kernel.op);
  d.dtype = static_cast<std::uint32_t>(launch.kernel.dtype);
  d.stream = static_cast<std::uint32_t>(launch.stream);
  tlm::tlm_generic_payload p;
  p.set_command(tlm::TLM_WRITE_COMMAND);
  p.set_address(0);
  p.set_data_ptr(reinterpret_cast<unsigned char*>(&d));
  p.set_data_length(sizeof d);
  p.set_streaming_width(sizeof d);
  p.set_byte_enable_ptr(nullptr);
  p.set_dmi_allowed(false);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  sc_core::sc_time delay = start > now ? start - now : sc_core::SC_ZERO_TIME;
  device_socket->b_transport(p, delay);
  finish = sc_core::sc_time_stamp() + delay;
  ++kernels_sent_;
  return p.get_response_status() == tlm::TLM_OK_RESPONSE;
}

void BaseProtocolGpu::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const sc_core::sc_time issue = sc_core::sc_time_stamp() + delay;
  if (auto* k = payload.get_extension<proto::KernelLaunch>()) {
    if (k->repeat < 1) {
      payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    sc_core::sc_time finish;
    for (int i = 0; i < k->repeat; ++i) {
      const sc_core::sc_time start = std::max(issue, free_at_);
      if (!run_kernel(*k, start, finish)) {
        payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
      }
      if (i == 0) {
        k->start = start;
        k->cost = {};
        k->cost.seconds = (finish - start).to_seconds();
      }
      free_at_ = finish;
    }
    k->finish = free_at_;
    // A target that waited has moved sc_time_stamp(): the launcher's time is not before its issue.
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    delay = issue > now ? issue - now : sc_core::SC_ZERO_TIME;
  } else if (payload.get_extension<proto::Synchronize>() != nullptr) {
    if (free_at_ > issue) delay += free_at_ - issue;
  } else if (auto* w = payload.get_extension<proto::StreamWait>()) {
    free_at_ = std::max(free_at_, w->until);
  } else {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace ks::hw
