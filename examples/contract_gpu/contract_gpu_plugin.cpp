// Registers examples/contract_gpu/contract_gpu.hpp as GPU kind `contract_gpu`. The GPU itself
// includes only the contract (proto/); this file is the registration glue: a schema for its
// parameters and hw::add_socket_gpu_kind, which wraps any module with a GPU target socket.
//
//   kernelsight run scenario.yaml --plugin build/examples/libks_example_contract_gpu.so
//       --set hardware.gpu.kind=contract_gpu --set hardware.gpu.peak_flops=4e14
#include <memory>
#include <string>

#include "base/config/error.hpp"
#include "base/config/schema.hpp"
#include "examples/contract_gpu/contract_gpu.hpp"
#include "hw/gpu/socket_gpu.hpp"
#include "kernels/gpu_spec.hpp"

namespace {

using namespace ks;

const bool registered = [] {
  config::Schema schema("Example plug-in: a GPU written only against the TLM contract, an SC_THREAD serving "
                        "its kernel queue; each kernel takes launch_latency + FLOPs / peak_flops "
                        "(examples/contract_gpu).");
  schema.string("spec", std::string("h100_sxm"), "catalog GPU whose memory size and name the app uses")
      .number("peak_flops", 1e15, "FLOP/s of the kernel engine", 1.0)
      .quantity("launch_latency", config::Dim::Time, std::string("2us"), "fixed time of every kernel", 0.0, false);
  hw::add_socket_gpu_kind("contract_gpu", schema, [](const hw::GpuArgs& args) {
    const kernels::GpuSpec* spec = kernels::find_builtin_gpu(args.params.string("spec"));
    if (spec == nullptr)
      throw config::ConfigError(args.params.mark("spec"), args.params.path() + ".spec",
                                "unknown GPU '" + args.params.string("spec") + "'");
    auto gpu = std::make_unique<contract_gpu::ContractGpu>(
        args.instance_name.c_str(), args.params.number("peak_flops"),
        sc_core::sc_time(args.params.number("launch_latency"), sc_core::SC_SEC), args.stats, args.trace);
    proto::GpuTargetSocketBase* socket = &gpu->socket;
    return hw::SocketGpuParts{std::move(gpu), socket, *spec};
  });
  return true;
}();

}  // namespace
