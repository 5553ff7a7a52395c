// GPU kind `catalog`: a GPU from the spec catalog, kernels priced by the kernel model of the
// chosen tier (roofline, cross-gen or target; see kernels/tiers.hpp).
#include <stdexcept>

#include "hw/gpu/gpu_module.hpp"
#include "kernels/calibration_store.hpp"
#include "kernels/kernel_cost_model.hpp"

namespace ks::hw {
namespace {

class CatalogGpu final : public GpuModule {
 public:
  CatalogGpu(const GpuArgs& args, const kernels::GpuSpec& spec)
      : GpuModule(args.instance_name.c_str(), args.device_id), costs_(make_cost_model(args, spec)) {}

  const kernels::GpuSpec& spec() const override { return costs_.gpu(); }
  kernels::KernelCost kernel_cost(const kernels::Kernel& kernel) const override { return costs_.cost(kernel); }

 private:
  static kernels::KernelCostModel make_cost_model(const GpuArgs& args, const kernels::GpuSpec& spec) {
    const kernels::Tier tier = *kernels::parse_tier(args.params.string("tier"));
    std::shared_ptr<const kernels::EfficiencyModel> model;
    if (tier != kernels::Tier::Roofline) {
      try {
        model = kernels::tier_model(tier, spec.name, args.params.string("calibration"));
      } catch (const std::runtime_error& e) {
        throw config::ConfigError(args.params.mark("tier"), args.params.path() + ".tier", e.what());
      }
    }
    return kernels::KernelCostModel(tier, spec, model, args.params.number("kernel_overhead"));
  }

  kernels::KernelCostModel costs_;
};

std::string known_gpus() {
  std::string list;
  for (const auto& name : kernels::builtin_gpu_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

const bool registered = [] {
  config::Schema schema("A GPU from the spec catalog; kernel time from the roofline (dense peak FLOP/s, "
                        "HBM bandwidth) times a learned efficiency, by tier.");
  schema.string("spec", std::string("h100_sxm"), "catalog name of the GPU (" + known_gpus() + ")")
      .choice("tier", {"roofline", "cross-gen", "target"}, std::string("cross-gen"),
              "kernel model: roofline (eta = 1), cross-gen (learned on other GPUs, spec sheet only) or "
              "target (calibrated on this GPU's sweep)")
      .string("calibration", std::string(""),
              "calibration file for the target tier (from `kernelsight calibrate`); default: the shipped one")
      .quantity("kernel_overhead", config::Dim::Time, std::string("2us"),
                "fixed GPU-side time per kernel of the roofline tier (the learned tiers fit their own)", 0.0,
                false);
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
