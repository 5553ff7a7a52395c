#pragma once
// A GPU kind made of any SystemC module with a GPU target socket (proto/protocol.hpp) — no
// KernelSight base class needed. The modeller writes their GPU against the contract headers only;
// one call registers it as a `hardware.gpu.kind`:
//
//   hw::add_socket_gpu_kind("my_gpu", schema, [](const hw::GpuArgs& args) {
//     auto gpu = std::make_unique<MyGpu>(args.instance_name.c_str(), ...);
//     proto::GpuTargetSocketBase& socket = gpu->socket;
//     return hw::SocketGpuParts{std::move(gpu), &socket, spec};
//   });
//
// The registry still yields a GpuModule (the app sizes memory from spec() and reports from it):
// SocketGpu is that adapter. Its own target socket forwards every transaction, unchanged and with
// its delay, to the model's socket; the model may answer at once or spend simulated time
// (wait() inside b_transport, its own SC_THREADs). The model reports its kernels itself, to the
// sink its factory gets in `GpuArgs::stats` (kernels.csv and the GPU time read the sinks); the
// adapter's own counters (busy_seconds, kernels_executed) stay zero.
#include <functional>
#include <memory>
#include <string>

#include <systemc>

#include "base/config/schema.hpp"
#include "hw/gpu/gpu_module.hpp"
#include "kernels/gpu_spec.hpp"
#include "proto/protocol.hpp"

namespace ks::hw {

// What a socket GPU kind's factory returns.
struct SocketGpuParts {
  std::unique_ptr<sc_core::sc_module> module;    // the user's model (owned by the adapter)
  proto::GpuTargetSocketBase* socket = nullptr;  // its GPU target socket (a member of `module`)
  kernels::GpuSpec spec;                         // memory size, name and peaks the app reports
};
using SocketGpuFactory = std::function<SocketGpuParts(const GpuArgs&)>;

class SocketGpu final : public GpuModule {
 public:
  // `make` is called with instance_name "model": the model becomes this module's child.
  SocketGpu(sc_core::sc_module_name name, const GpuArgs& args, const SocketGpuFactory& make);

  const kernels::GpuSpec& spec() const override { return parts_.spec; }
  // The model prices its kernels itself; nothing asks the adapter (it throws std::logic_error).
  kernels::KernelCost kernel_cost(const kernels::Kernel& kernel) const override;
  sc_core::sc_module& model() { return *parts_.module; }

 protected:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) override;

 private:
  proto::GpuInitiatorSocket<SocketGpu> to_model_{"to_model"};
  SocketGpuParts parts_;
};

// Registers GPU kind `kind` whose modules come from `make` (schema: the kind's parameters).
void add_socket_gpu_kind(const std::string& kind, const config::Schema& schema, SocketGpuFactory make);

}  // namespace ks::hw
