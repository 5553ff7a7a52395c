#pragma once
// The TLM protocol of KernelSight's GPU sockets. A distinct protocol-types struct means a
// base-protocol socket cannot be bound to a GPU socket by mistake: the binding fails to compile.
// Payloads are tlm_generic_payload with command TLM_IGNORE_COMMAND, no data pointer, and exactly
// one of the extensions in extensions.hpp saying what to do.
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace ks::proto {

struct gpu_protocol_types {
  using tlm_payload_type = tlm::tlm_generic_payload;
  using tlm_phase_type = tlm::tlm_phase;
};

constexpr unsigned kBusWidth = 64;

template <class Module>
using GpuTargetSocket = tlm_utils::simple_target_socket<Module, kBusWidth, gpu_protocol_types>;
template <class Module>
using GpuInitiatorSocket = tlm_utils::simple_initiator_socket<Module, kBusWidth, gpu_protocol_types>;

// Plain socket types, for modules that implement the interfaces themselves.
using GpuTargetSocketBase = tlm::tlm_target_socket<kBusWidth, gpu_protocol_types>;
using GpuInitiatorSocketBase = tlm::tlm_initiator_socket<kBusWidth, gpu_protocol_types>;

}  // namespace ks::proto
