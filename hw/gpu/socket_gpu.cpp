#include "hw/gpu/socket_gpu.hpp"

#include <stdexcept>
#include <utility>

namespace ks::hw {

SocketGpu::SocketGpu(sc_core::sc_module_name name, const GpuArgs& args, const SocketGpuFactory& make)
    : GpuModule(name, args.device_id) {
  GpuArgs child = args;
  child.instance_name = "model";
  parts_ = make(child);
  if (!parts_.module || parts_.socket == nullptr)
    throw std::logic_error(std::string(this->name()) + ": a socket GPU factory must return its module and socket");
  to_model_.bind(*parts_.socket);
}

kernels::KernelCost SocketGpu::kernel_cost(const kernels::Kernel&) const {
  throw std::logic_error(std::string(name()) + ": a socket GPU prices its kernels in its own model");
}

void SocketGpu::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  to_model_->b_transport(payload, delay);
}

void add_socket_gpu_kind(const std::string& kind, const config::Schema& schema, SocketGpuFactory make) {
  gpu_registry().add(kind, {schema.doc(), schema, [make](const GpuArgs& args) -> std::unique_ptr<GpuModule> {
                              return std::make_unique<SocketGpu>(args.instance_name.c_str(), args, make);
                            }});
}

}  // namespace ks::hw
