#include "hw/interconnect/interconnect_kind.hpp"

#include <utility>

#include "hw/interconnect/fabric_module.hpp"

namespace ks::hw {

std::unique_ptr<InterconnectParts> make_fabric(const std::string& instance_name,
                                               std::shared_ptr<const interconnect::Topology> topology) {
  auto fabric = std::make_unique<FabricModule>(instance_name.c_str(), std::move(topology));
  auto parts = std::make_unique<InterconnectParts>();
  FabricModule* f = fabric.get();
  parts->fabric = f;
  parts->bind = [f](proto::GpuInitiatorSocketBase& initiator) { initiator.bind(f->socket); };
  parts->module = std::move(fabric);
  return parts;
}

namespace {
const bool registered = [] {
  config::Schema schema("The built-in fabric: collectives and copies decomposed into link transfers on "
                        "hardware.topology, contending for shared links (the default).");
  interconnect_registry().add("fabric", {schema.doc(), schema, [](const InterconnectArgs& args) {
                                           return make_fabric(args.instance_name, args.topology);
                                         }});
  return true;
}();
}  // namespace

}  // namespace ks::hw
