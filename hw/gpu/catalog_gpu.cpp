// GPU kind `catalog`: a GPU from the spec catalog, kernels priced by the roofline model.
// (The learned-efficiency tiers plug in here as the kernel cost model grows.)
#include <stdexcept>

#include "hw/gpu/gpu_module.hpp"

namespace ks::hw {
namespace {

class CatalogGpu final : public GpuModule {
 public:
  CatalogGpu(const GpuArgs& args, const kernels::GpuSpec& spec)
      : GpuModule(args.instance_name.c_str(), args.device_id),
        spec_(spec),
        kernel_overhead_s_(args.params.number("kernel_overhead")) {}

  const kernels::GpuSpec& spec() const override { return spec_; }
  kernels::KernelCost kernel_cost(const kernels::Kernel& kernel) const override {
    return kernels::roofline_cost(kernel, spec_, kernel_overhead_s_);
  }

 private:
  kernels::GpuSpec spec_;
  double kernel_overhead_s_;
};

std::string known_gpus() {
  std::string list;
  for (const auto& name : kernels::builtin_gpu_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

const bool registered = [] {
  config::Schema schema("A GPU from the spec catalog; kernel time = roofline (dense peak FLOP/s, "
                        "HBM bandwidth) plus a fixed per-kernel overhead.");
  schema.string("spec", std::string("h100_sxm"), "catalog name of the GPU (" + known_gpus() + ")")
      .quantity("kernel_overhead", config::Dim::Time, std::string("2us"),
                "fixed GPU-side time per kernel (launch latency, tail effects)", 0.0, false);
  gpu_registry().add("catalog", {schema.doc(), schema, [](const GpuArgs& args) -> std::unique_ptr<GpuModule> {
                                   const std::string& name = args.params.string("spec");
                                   const kernels::GpuSpec* spec = kernels::find_builtin_gpu(name);
                                   if (spec == nullptr)
                                     throw config::ConfigError(args.params.mark("spec"),
                                                               args.params.path() + ".spec",
                                                               "unknown GPU '" + name + "' (known: " + known_gpus() + ")");
                                   return std::make_unique<CatalogGpu>(args, *spec);
                                 }});
  return true;
}();

}  // namespace
}  // namespace ks::hw
