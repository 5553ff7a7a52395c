// GPU kind `catalog`: a GPU from the spec catalog, kernels priced by the kernel model of the
// chosen tier (roofline, cross-gen or target; see kernels/tiers.hpp).
// A hypothetical GPU is a spec file (`spec_file`) or catalog numbers overridden one by one
// (`hbm_bandwidth: 6TB/s`, `peak_bf16: 2000TFLOPS`, ...; empty = from the spec).
#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "hw/gpu/catalog_gpu.hpp"
#include "hw/gpu/gpu_module.hpp"
#include "kernels/calibration_store.hpp"
#include "kernels/gpu_catalog.hpp"
#include "kernels/gpu_override.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "kernels/kernel_uncertainty.hpp"
#include "kernels/shared_cost_model.hpp"
#include "kernels/spec_error.hpp"

namespace ks::hw {
namespace {

kernels::GpuSpec base_spec(const config::Params& params);

class CatalogGpu final : public GpuModule {
 public:
  CatalogGpu(const GpuArgs& args, const kernels::GpuSpec& spec)
      : GpuModule(args.instance_name.c_str(), args.device_id),
        costs_(kernels::shared_cost_model(make_cost_model(args, spec))) {}

  const kernels::GpuSpec& spec() const override { return costs_->gpu(); }
  kernels::KernelCost kernel_cost(const kernels::Kernel& kernel) const override { return costs_->cost(kernel); }
  bool reuses_kernel_costs() const override { return costs_->memoise(); }
  void will_price(const kernels::Kernel& kernel) const override { costs_->prefetch(kernel); }

 private:
  static kernels::KernelCostModel make_cost_model(const GpuArgs& args, const kernels::GpuSpec& spec) {
    const kernels::Tier tier = *kernels::parse_tier(args.params.string("tier"));
    std::shared_ptr<const kernels::EfficiencyModel> model;
    if (tier != kernels::Tier::Roofline) {
      try {
        model = kernels::tier_model(tier, spec.name, args.params.string("calibration"),
                                    args.params.string("kernel_engine"), args.params.string("attention_backend"));
      } catch (const kernels::AttentionBackendError& e) {
        throw config::ConfigError(args.params.mark("attention_backend"), args.params.path() + ".attention_backend",
                                  e.what());
      } catch (const std::exception& e) {  // missing or malformed calibration file
        throw config::ConfigError(args.params.mark("tier"), args.params.path() + ".tier", e.what());
      }
    }
    kernels::KernelCostModel costs(tier, spec, model, args.params.number("kernel_overhead"));
    costs.set_memoise(args.params.flag("memoise"));
    const bool what_if = std::any_of(spec.sources.begin(), spec.sources.end(),
                                     [](const auto& s) { return s.second == "override"; });
    if (what_if) costs.set_calibrated_gpu(base_spec(args.params));
    try {
      costs.set_time_scales(kernels::parse_class_scales(args.params.string("kernel_time_scale")));
    } catch (const std::invalid_argument& e) {
      throw config::ConfigError(args.params.mark("kernel_time_scale"), args.params.path() + ".kernel_time_scale",
                                e.what());
    }
    return costs;
  }

  std::shared_ptr<const kernels::KernelCostModel> costs_;  // shared with the GPUs that price alike
};

std::string known_gpus() {
  std::string list;
  for (const auto& name : kernels::builtin_gpu_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

// A relative spec_file is relative to the scenario file that names it (else to the cwd).
std::string resolve_path(const std::string& path, const config::SourceMark& mark) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || mark.line == 0) return path;
  return (std::filesystem::path(mark.origin).parent_path() / p).string();
}

// The catalog entry or spec file, before per-field overrides.
kernels::GpuSpec base_spec(const config::Params& params) {
  kernels::GpuSpec spec;
  const std::string& file = params.string("spec_file");
  if (!file.empty()) {
    try {
      spec = kernels::load_gpu_spec(resolve_path(file, params.mark("spec_file")));
    } catch (const kernels::SpecError& e) {
      throw config::ConfigError(params.mark("spec_file"), params.path() + ".spec_file", e.what());
    }
  } else {
    const std::string& name = params.string("spec");
    const kernels::GpuSpec* found = kernels::find_builtin_gpu(name);
    if (found == nullptr)
      throw config::ConfigError(params.mark("spec"), params.path() + ".spec",
                                "unknown GPU '" + name + "' (known: " + known_gpus() + ")");
    spec = *found;
  }
  return spec;
}

}  // namespace

kernels::GpuSpec catalog_gpu_spec(const config::Params& params) {
  kernels::GpuSpec spec = base_spec(params);
  for (const kernels::GpuField& field : kernels::gpu_fields()) {
    const std::string& text = params.string(field.key);
    if (text.empty()) continue;
    try {
      kernels::set_gpu_field(spec, field.key, text);
    } catch (const std::invalid_argument& e) {
      throw config::ConfigError(params.mark(field.key), params.path() + "." + field.key, e.what());
    }
    spec.sources[field.key] = "override";
  }
  return spec;
}

namespace {

const bool registered = [] {
  config::Schema schema("A GPU from the spec catalog; kernel time from the roofline (dense peak FLOP/s, "
                        "HBM bandwidth) times a learned efficiency, by tier.");
  schema.string("spec", std::string("h100_sxm"), "catalog name of the GPU (" + known_gpus() + ")")
      .string("spec_file", std::string(""),
              "GPU spec YAML file (format of data/gpus/*.yaml); replaces `spec` when set")
      .choice("tier", {"roofline", "cross-gen", "target"}, std::string("cross-gen"),
              "kernel model: roofline (eta = 1), cross-gen (learned on other GPUs, spec sheet only) or "
              "target (calibrated on this GPU's sweep)")
      .string("calibration", std::string(""),
              "calibration file for the target tier (from `kernelsight calibrate`); default: the shipped one")
      .choice("kernel_engine", {"", "trtllm", "vllm", "sglang"}, std::string(""),
              "serving engine whose measured kernels calibrate the learned tiers (its shipped calibration, "
              "else the engine-neutral one); the engine profile sets it; empty: engine-neutral")
      .choice("attention_backend", {"", "fa2", "fa3", "fa4", "flashinfer", "trtllm", "triton"}, std::string(""),
              "attention kernels the engine runs (FlashAttention-2/3/4, FlashInfer, TensorRT-LLM's own, Triton): "
              "the learned tiers price attention from that backend's calibration (measured for this GPU x "
              "kernel_engine; an error lists the backends that have data); empty: the engine's default backend "
              "on this GPU generation (trtllm: trtllm; vllm: fa3 on Hopper, flashinfer on Blackwell, else fa2; "
              "sglang: fa3 on Hopper, trtllm on Blackwell, else flashinfer) where the target tier has a calibration "
              "of its own, else (and on the cross-gen tier) the engine calibration's attention as measured (all "
              "its backends pooled)")
      .quantity("kernel_overhead", config::Dim::Time, std::string("2us"),
                "fixed GPU-side time per kernel of the roofline tier (the learned tiers fit their own)", 0.0,
                false)
      .string("kernel_time_scale", std::string(""),
              "multiply the predicted time of kernel classes, e.g. gemm=1.1,attention_decode=0.9 (classes: "
              "gemm, attention_prefill, attention_decode, norm, activation, add, rope, embedding); a what-if "
              "on the kernel model, and how `run --intervals` samples its uncertainty; empty = as predicted")
      .flag("memoise", true,
            "remember each kernel shape's cost (a pure function of the shape; off only for the --exact "
            "reference run)");
  for (const kernels::GpuField& field : kernels::gpu_fields()) {
    schema.string(field.key, std::string(""), "override: " + field.doc + "; empty = from the spec");
  }
  gpu_registry().add("catalog", {schema.doc(), schema, [](const GpuArgs& args) -> std::unique_ptr<GpuModule> {
                                   return std::make_unique<CatalogGpu>(args, catalog_gpu_spec(args.params));
                                 }});
  return true;
}();

}  // namespace
}  // namespace ks::hw
