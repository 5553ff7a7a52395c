// Example plug-in: a GPU kind (`hbm_module_gpu`) whose HBM is a separate SystemC module reached
// over its own TLM socket (base protocol). Every kernel sends one read of its bytes to the memory
// module, which answers after its latency plus bytes / bandwidth; the kernel's time is the slower
// of its compute (FLOPs at the catalog peak) and that memory time. (The GPU's stream already runs
// kernels one after another, so the memory need not queue them again.)
//
// Build it as a shared library against KernelSight's headers and load it with
//   kernelsight run scenario.yaml --plugin libks_example_hbm_gpu.so --set hardware.gpu.kind=hbm_module_gpu
// Its static initialiser registers the kind in the executable's GPU registry.
#include <algorithm>
#include <climits>
#include <memory>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "hw/gpu/gpu_module.hpp"
#include "kernels/gpu_spec.hpp"

namespace {

using namespace ks;

// The memory: a TLM target that answers a read of N bytes after latency + N / bandwidth.
class HbmMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<HbmMemory> socket{"socket"};

  HbmMemory(const sc_core::sc_module_name& name, double bandwidth, sc_core::sc_time latency)
      : sc_core::sc_module(name), bandwidth_(bandwidth), latency_(latency) {
    socket.register_b_transport(this, &HbmMemory::b_transport);
  }
  std::uint64_t accesses() const { return accesses_; }

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const double bytes = static_cast<double>(p.get_data_length());
    delay += latency_ + sc_core::sc_time(bytes / bandwidth_, sc_core::SC_SEC);
    ++accesses_;
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  double bandwidth_;
  sc_core::sc_time latency_;
  std::uint64_t accesses_ = 0;
};

class HbmModuleGpu final : public hw::GpuModule {
 public:
  tlm_utils::simple_initiator_socket<HbmModuleGpu> mem_socket{"mem_socket"};

  // The module name is taken by value: it must live until the derived module's own SystemC
  // members (the socket, the memory) are built.
  HbmModuleGpu(sc_core::sc_module_name name, const hw::GpuArgs& args, const kernels::GpuSpec& spec)
      : hw::GpuModule(name, args.device_id),
        spec_(spec),
        memory_(std::make_unique<HbmMemory>((args.instance_name + "_hbm").c_str(),
                                            args.params.number("bandwidth_fraction") * spec.hbm_bandwidth,
                                            sc_core::sc_time(args.params.number("latency"), sc_core::SC_SEC))) {
    mem_socket.bind(memory_->socket);
  }

  const kernels::GpuSpec& spec() const override { return spec_; }

  kernels::KernelCost kernel_cost(const kernels::Kernel& kernel) const override {
    kernels::KernelCost c{};
    c.compute_seconds = kernel.flops > 0 ? kernel.flops / spec_.peak(kernel.dtype) : 0.0;
    // Ask the memory module how long the kernel's bytes take, as seen from now.
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_READ_COMMAND);
    p.set_address(0);
    p.set_data_ptr(&scratch_);
    p.set_data_length(static_cast<unsigned>(std::min(kernel.bytes, static_cast<double>(UINT_MAX))));
    p.set_streaming_width(p.get_data_length());
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const_cast<HbmModuleGpu*>(this)->mem_socket->b_transport(p, delay);
    c.memory_seconds = delay.to_seconds();
    c.seconds = std::max(c.compute_seconds, c.memory_seconds);
    c.bound = c.compute_seconds >= c.memory_seconds ? kernels::Bound::Compute : kernels::Bound::Memory;
    c.efficiency = 1.0;
    return c;
  }

 private:
  kernels::GpuSpec spec_;
  std::unique_ptr<HbmMemory> memory_;
  mutable unsigned char scratch_ = 0;
};

const bool registered = [] {
  config::Schema schema("Example plug-in: a catalog GPU whose HBM is a separate SystemC memory module "
                        "on its own TLM socket (examples/plugins/hbm_gpu).");
  schema.string("spec", std::string("h100_sxm"), "catalog name of the GPU")
      .number("bandwidth_fraction", 0.85, "fraction of the spec's HBM bandwidth the memory sustains", 0.01, 1.0)
      .quantity("latency", config::Dim::Time, std::string("1us"), "latency of one memory access", 0.0, false);
  hw::gpu_registry().add("hbm_module_gpu",
                         {schema.doc(), schema, [](const hw::GpuArgs& args) -> std::unique_ptr<hw::GpuModule> {
                            const kernels::GpuSpec* spec = kernels::find_builtin_gpu(args.params.string("spec"));
                            if (spec == nullptr)
                              throw config::ConfigError(args.params.mark("spec"), args.params.path() + ".spec",
                                                        "unknown GPU '" + args.params.string("spec") + "'");
                            return std::make_unique<HbmModuleGpu>(args.instance_name.c_str(), args, *spec);
                          }});
  return true;
}();

}  // namespace
