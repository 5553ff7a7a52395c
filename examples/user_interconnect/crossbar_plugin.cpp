// Registers examples/user_interconnect/crossbar.hpp as interconnect kind `crossbar`:
//   kernelsight run scenario.yaml --plugin build/examples/libks_example_crossbar.so
//       --set hardware.interconnect.kind=crossbar
// The crossbar includes only the contract; this file is the registration glue.
#include <memory>
#include <string>

#include "base/config/schema.hpp"
#include "examples/user_interconnect/crossbar.hpp"
#include "hw/interconnect/interconnect_kind.hpp"

namespace {

using namespace ks;

const bool registered = [] {
  config::Schema schema("Example plug-in: one shared crossbar, written only against the TLM contract, "
                        "in place of the fabric (examples/user_interconnect).");
  schema.quantity("latency", config::Dim::Time, std::string("5us"), "fixed time of every transfer", 0.0, false)
      .quantity("bandwidth", config::Dim::Bandwidth, std::string("100GB/s"), "crossbar bandwidth", 1.0, false);
  hw::interconnect_registry().add("crossbar", {schema.doc(), schema, [](const hw::InterconnectArgs& args) {
                                                auto xbar = std::make_unique<user_interconnect::Crossbar>(
                                                    args.instance_name.c_str(),
                                                    sc_core::sc_time(args.params.number("latency"), sc_core::SC_SEC),
                                                    args.params.number("bandwidth"));
                                                auto parts = std::make_unique<hw::InterconnectParts>();
                                                user_interconnect::Crossbar* x = xbar.get();
                                                parts->bind = [x](proto::GpuInitiatorSocketBase& s) { s.bind(x->socket); };
                                                parts->module = std::move(xbar);
                                                return parts;
                                              }});
  return true;
}();

}  // namespace
