#pragma once
// Interconnect kinds: `hardware.interconnect.kind` picks the module that carries the Collective
// and MemCopy transactions of TP groups and pipeline links. Any module with a target socket of
// the GPU protocol (proto/protocol.hpp) can be one — no base class of ours. The built-in kind
// `fabric` is hw::FabricModule on `hardware.topology` (the default when the section is absent).
// A kind's factory returns InterconnectParts; examples/user_interconnect registers a crossbar.
#include <functional>
#include <memory>
#include <string>

#include <systemc>

#include "base/config/schema.hpp"
#include "base/registry/registry.hpp"
#include "hw/interconnect/topology.hpp"
#include "proto/protocol.hpp"

namespace ks::hw {

class FabricModule;

struct InterconnectArgs {
  std::string instance_name;                                // SystemC module name
  std::shared_ptr<const interconnect::Topology> topology;   // hardware.topology
  config::Params params;                                    // the kind's parameters
};

struct InterconnectParts {
  std::unique_ptr<sc_core::sc_module> module;
  // Binds one initiator (a TP group's or a pipeline link's fabric_socket) to the module; called
  // once per initiator, so the module needs a socket that takes several (e.g. a
  // tlm_utils::multi_passthrough_target_socket) when the run has more than one.
  std::function<void(proto::GpuInitiatorSocketBase&)> bind;
  FabricModule* fabric = nullptr;  // the built-in fabric (declared groups, link traces); else null
};

using InterconnectRegistry = registry::Registry<InterconnectParts, const InterconnectArgs&>;
inline InterconnectRegistry& interconnect_registry() { return InterconnectRegistry::instance("interconnect"); }

// The built-in fabric, as kind `fabric` makes it.
std::unique_ptr<InterconnectParts> make_fabric(const std::string& instance_name,
                                               std::shared_ptr<const interconnect::Topology> topology);

}  // namespace ks::hw
