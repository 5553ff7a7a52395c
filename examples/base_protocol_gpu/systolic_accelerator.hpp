#pragma once
// Example (2) of issue 18: an accelerator model with a plain TLM-2.0 base-protocol target socket,
// written with no KernelSight header at all, put behind a GPU socket by hw::BaseProtocolGpu
// (hw/gpu/base_protocol_gpu.hpp, which documents the protocol). It reads the kernel's FLOPs
// (the descriptor's first 8 bytes, a double) from each TLM_WRITE and answers loosely timed:
// delay += (setup_cycles + ceil(FLOPs / (2 x macs_per_cycle))) x clock period.
#include <cmath>
#include <cstdint>
#include <cstring>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

namespace base_protocol_gpu {

class SystolicAccelerator : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<SystolicAccelerator> socket{"socket"};

  SystolicAccelerator(const sc_core::sc_module_name& name, sc_core::sc_time clock, double macs_per_cycle,
                      std::uint64_t setup_cycles)
      : sc_core::sc_module(name), clock_(clock), macs_per_cycle_(macs_per_cycle), setup_cycles_(setup_cycles) {
    socket.register_b_transport(this, &SystolicAccelerator::b_transport);
  }

  std::uint64_t writes() const { return writes_; }
  double last_flops() const { return last_flops_; }

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    if (p.get_command() != tlm::TLM_WRITE_COMMAND || p.get_data_length() < sizeof(double) ||
        p.get_byte_enable_ptr() != nullptr) {
      p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
      return;
    }
    double flops = 0;
    std::memcpy(&flops, p.get_data_ptr(), sizeof flops);
    const double cycles = static_cast<double>(setup_cycles_) + std::ceil(flops / (2.0 * macs_per_cycle_));
    delay += clock_ * cycles;
    ++writes_;
    last_flops_ = flops;
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  sc_core::sc_time clock_;
  double macs_per_cycle_;
  std::uint64_t setup_cycles_;
  std::uint64_t writes_ = 0;
  double last_flops_ = 0;
};

}  // namespace base_protocol_gpu
