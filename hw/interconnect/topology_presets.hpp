#pragma once
// Topology kinds by YAML `kind:` (hardware.topology): presets of common servers, each with its
// link parameters as overridable keys, and a node count for multi-node InfiniBand clusters.
#include <memory>

#include "hw/interconnect/topology.hpp"
#include "base/config/schema.hpp"
#include "base/registry/registry.hpp"

namespace ks::interconnect {

using TopologyRegistry = registry::Registry<Topology, const config::Params&>;
inline TopologyRegistry& topology_registry() { return TopologyRegistry::instance("topology"); }

// Builds a preset by name with its default parameters (for the CLI and tests); `nodes` and
// `gpus_per_node` replace the defaults when > 0. Throws std::invalid_argument for unknown names.
std::unique_ptr<Topology> make_preset(const std::string& kind, int nodes = 0, int gpus_per_node = 0);

// A kind's parameters as its defaults give them. Throws std::invalid_argument for unknown names.
config::Params preset_defaults(const std::string& kind);

}  // namespace ks::interconnect
