#pragma once
// Adapter: puts a TLM-2.0 *base-protocol* target (tlm::tlm_base_protocol_types, e.g. an
// accelerator model with a tlm_utils::simple_target_socket) behind a GPU socket. The target
// knows nothing of KernelSight: it receives every kernel as a plain TLM_WRITE_COMMAND of a
// KernelDescriptor and says how long the kernel takes in the usual loosely-timed way.
//
// What the adapter sends, per kernel (each repeat separately):
//   command TLM_WRITE_COMMAND, address 0, data = one KernelDescriptor (below, native byte order),
//   data length = streaming width = sizeof(KernelDescriptor), byte enables off;
//   delay = the kernel's start time - sc_time_stamp().
// What the target must do: set TLM_OK_RESPONSE and return with the kernel's finish at
// sc_time_stamp() + delay — by adding its execution time to `delay` (loosely timed), or by
// spending it in wait() (then the launcher is blocked meanwhile). Any other response status is
// reported to the launcher as TLM_GENERIC_ERROR_RESPONSE.
//
// Timing the adapter adds: the device is one in-order engine shared by all streams. A kernel
// starts when it is issued (sc_time_stamp() + the launcher's delay) and the previous one has
// finished; KernelLaunch gets start, finish and cost.seconds filled. Synchronize extends the
// launcher's delay until the engine is free; StreamWait keeps the engine idle until its time;
// StepLaunch is answered with TLM_COMMAND_ERROR_RESPONSE (the host then launches kernels).
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "proto/extensions.hpp"
#include "proto/protocol.hpp"

namespace ks::hw {

// The bytes of one kernel as written to the base-protocol target. Trivially copyable.
struct KernelDescriptor {
  double flops = 0;          // floating-point operations of one kernel
  double bytes = 0;          // HBM bytes it reads and writes
  std::int64_t m = 0, n = 0, k = 0;  // shape (kernels::Kernel's meaning)
  std::uint32_t op = 0;      // kernels::OpKind as an integer
  std::uint32_t dtype = 0;   // kernels::DType as an integer
  std::uint32_t stream = 0;
  std::uint32_t reserved = 0;
};

class BaseProtocolGpu : public sc_core::sc_module {
 public:
  proto::GpuTargetSocket<BaseProtocolGpu> socket{"socket"};                // bind the host here
  tlm_utils::simple_initiator_socket<BaseProtocolGpu> device_socket{"device_socket"};  // bind the target here

  explicit BaseProtocolGpu(const sc_core::sc_module_name& name);

  std::uint64_t kernels_sent() const { return kernels_sent_; }
  sc_core::sc_time engine_free_at() const { return free_at_; }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  bool run_kernel(const proto::KernelLaunch& launch, sc_core::sc_time start, sc_core::sc_time& finish);

  sc_core::sc_time free_at_;  // absolute time the engine is free
  std::uint64_t kernels_sent_ = 0;
};

}  // namespace ks::hw
