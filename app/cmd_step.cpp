// `kernelsight step`: every kernel of one engine step on one GPU, priced in a tier, as CSV.
// Answers "which kernels dominate decode at batch 64?" and feeds `scripts/plot.py roofline`:
// each row carries the GPU's roofs for its dtype, so the plot needs nothing else.
#include <array>
#include <cstdio>
#include <iostream>
#include <numeric>

#include "app/cli_options.hpp"
#include "app/simulation.hpp"
#include "hw/interconnect/fabric_model.hpp"
#include "hw/interconnect/fabric_transfer.hpp"
#include "hw/interconnect/topology_presets.hpp"
#include "kernels/calibration_store.hpp"
#include "kernels/gpu_catalog.hpp"
#include "kernels/gpu_override.hpp"
#include "kernels/hf_config.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "kernels/spec_error.hpp"
#include "kernels/step_decomposer.hpp"
#include "base/util/atomic_file.hpp"

namespace po = boost::program_options;

namespace ks::app {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// --gpu is a catalog name or a spec file (.yaml); --set FIELD=VALUE overrides its numbers.
kernels::GpuSpec load_gpu(const std::string& gpu, const std::vector<std::string>& sets) {
  kernels::GpuSpec spec;
  if (ends_with(gpu, ".yaml") || ends_with(gpu, ".yml")) {
    try {
      spec = kernels::load_gpu_spec(gpu);
    } catch (const kernels::SpecError& e) {
      throw std::invalid_argument(e.what());
    }
  } else {
    const kernels::GpuSpec* found = kernels::find_builtin_gpu(gpu);
    if (found == nullptr) throw std::invalid_argument("--gpu: unknown GPU '" + gpu + "' (see kernelsight list)");
    spec = *found;
  }
  for (const std::string& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--set " + s + ": expected FIELD=VALUE");
    try {
      kernels::set_gpu_field(spec, s.substr(0, eq), s.substr(eq + 1));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--set " + s + ": " + e.what());
    }
    spec.sources[s.substr(0, eq)] = "override";
  }
  return spec;
}

// --model is a preset name or a Hugging Face config.json.
kernels::ModelConfig load_model(const std::string& name) {
  if (ends_with(name, ".json")) {
    try {
      return kernels::load_hf_config(name);
    } catch (const kernels::SpecError& e) {
      throw std::invalid_argument(e.what());
    }
  }
  const kernels::ModelConfig* found = kernels::find_builtin_model(name);
  if (found == nullptr) throw std::invalid_argument("--model: unknown model '" + name + "' (see kernelsight list)");
  return *found;
}

kernels::DType dtype_option(const std::string& option, const std::string& text) {
  const auto d = kernels::parse_dtype(text);
  if (!d) throw std::invalid_argument(option + ": expected fp32, fp16, bf16, fp8, int8, int4 or fp4, got '" + text + "'");
  return *d;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

int cmd_step(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight step --model M --gpu G [--decode N --context C] [--prefill P] [options]\n\n"
      "Every kernel of one engine step on one GPU (one TP rank), priced in the chosen tier, as CSV:\n"
      "section (pre | layer | post), kernel, op, phase, dtype, shape m,n,k, count (launches in the\n"
      "step: layers for per-layer kernels), per launch flops, bytes, intensity (FLOP/B), predicted_us,\n"
      "roofline_us, bound, efficiency, achieved_tflops, then total_us (count x predicted) and share of\n"
      "the step, and the GPU's roofs for the row: peak_tflops (its dtype) and hbm_gbps.\n"
      "Under --tp > 1 the all-reduces are priced on an idle --topology (bound communication).\n"
      "A summary line goes to stderr. `scripts/plot.py roofline` draws this CSV.\n\noptions");
  std::string engine, attention_backend;
  std::string model_name, gpu_name, tier_text = "cross-gen", calibration, dtype_text = "bf16", kv_text = "auto",
                                    topology, out;
  std::vector<std::string> sets;
  int tp = 1;
  std::int64_t decode = 0, context = 0, prefill = 0, cached = 0;
  opts.add_options()("help,h", "show this help")("model,m", po::value(&model_name)->required(),
                                                  "model preset (kernelsight list) or a HF config.json")(
      "gpu,g", po::value(&gpu_name)->required(), "catalog GPU (kernelsight list) or a GPU spec file (.yaml)")(
      "set,s", po::value(&sets)->composing(),
      "GPU spec override FIELD=VALUE, e.g. hbm_bandwidth=6.7TB/s (repeatable; kernelsight describe catalog)")(
      "tier", po::value(&tier_text)->default_value(tier_text), "roofline | cross-gen | target")(
      "engine", po::value(&engine), "engine whose measured kernels calibrate the tier (trtllm, vllm, sglang)")(
      "attention-backend", po::value(&attention_backend),
      "attention backend whose calibration prices attention (fa2, fa3, fa4, flashinfer, trtllm, triton; "
      "default: the engine's default where calibrated)")(
      "calibration", po::value(&calibration), "calibration file (target tier)")(
      "dtype", po::value(&dtype_text)->default_value(dtype_text), "weight dtype: fp32 fp16 bf16 fp8 int8 int4 fp4 (NVFP4, on GPUs with fp4 tensor cores)")(
      "kv-dtype", po::value(&kv_text)->default_value(kv_text), "KV-cache dtype (not fp4); auto = activation dtype")(
      "tp", po::value(&tp)->default_value(tp), "tensor-parallel GPUs")(
      "topology", po::value(&topology), "topology kind for --tp > 1 (default: the preset matching the GPU)")(
      "decode,d", po::value(&decode)->default_value(decode), "decode sequences in the step")(
      "context,c", po::value(&context)->default_value(context), "context tokens of each decode sequence")(
      "prefill,p", po::value(&prefill)->default_value(prefill), "prompt tokens of one prefill chunk (0: none)")(
      "cached", po::value(&cached)->default_value(cached), "tokens of that prompt already in the KV cache")(
      "out,o", po::value(&out), "CSV file (default: stdout)");
  po::variables_map vm;
  if (int rc = parse_options("step", args, opts, vm); rc >= 0) return rc;
  return run_reporting_errors([&] {
    const auto tier = kernels::parse_tier(tier_text);
    if (!tier) throw std::invalid_argument("--tier must be roofline, cross-gen or target, got '" + tier_text + "'");
    if (decode < 0 || prefill < 0 || cached < 0) throw std::invalid_argument("--decode, --prefill, --cached must be >= 0");
    if (decode == 0 && prefill == 0) throw std::invalid_argument("an empty step: give --decode N and/or --prefill P");
    if (decode > 0 && context < 1) throw std::invalid_argument("--decode needs --context C >= 1 (tokens per sequence)");
    if (tp < 1) throw std::invalid_argument("--tp must be >= 1");
    const kernels::ModelConfig model = load_model(model_name);
    const kernels::GpuSpec gpu = load_gpu(gpu_name, sets);
    const kernels::DType wdt = dtype_option("--dtype", dtype_text);
    const kernels::DType kvdt = kv_text == "auto" ? kernels::activation_dtype(wdt) : dtype_option("--kv-dtype", kv_text);
    // As a scenario's cache.kv_dtype: NVFP4 is a weight format here, not a KV-cache one.
    if (kvdt == kernels::DType::FP4)
      throw std::invalid_argument("--kv-dtype: fp4 is a weight format, not a KV-cache dtype "
                                  "(expected auto, fp32, fp16, bf16, fp8, int8 or int4)");

    kernels::StepBatch batch;
    if (prefill > 0) batch.prefills.push_back({prefill, cached, true});
    batch.decode_contexts.assign(static_cast<std::size_t>(decode), context);
    const kernels::StepKernels step = kernels::decompose_step(model, batch, wdt, kvdt, {tp, 1});

    std::shared_ptr<const kernels::EfficiencyModel> eff;
    if (*tier != kernels::Tier::Roofline) {
      try {
        eff = kernels::tier_model(*tier, gpu.name, calibration, engine, attention_backend);
      } catch (const std::runtime_error& e) {
        throw std::invalid_argument(e.what());
      }
    }
    kernels::KernelCostModel costs(*tier, gpu, eff, kernels::kRooflineLaunchSeconds);
    if (!sets.empty()) costs.set_calibrated_gpu(load_gpu(gpu_name, {}));
    std::unique_ptr<interconnect::Topology> topo;
    std::vector<int> group(static_cast<std::size_t>(tp));
    std::iota(group.begin(), group.end(), 0);
    if (tp > 1) {
      // No topology named: the GPU's measured system, or the fabric transferred from its spec.
      auto make = [&](int nodes) {
        return topology.empty() ? interconnect::make_default_fabric(scale_up_links(gpu), nodes)
                                : interconnect::make_preset(topology, nodes);
      };
      topo = make(0);
      const int per_node = topo->gpus_per_node();
      if (topo->num_gpus() < tp) topo = make((tp + per_node - 1) / per_node);
    }

    struct Row {
      const char* section;
      const kernels::Kernel* k;
      int count;
      kernels::KernelCost c;
      double roofline_s;
    };
    std::vector<Row> rows;
    double step_s = 0;
    auto add = [&](const char* section, const kernels::KernelList& ks, int count) {
      for (const kernels::Kernel& k : ks) {
        Row r{section, &k, count, {}, 0};
        if (kernels::is_collective(k.op)) {
          const auto kind = k.op == kernels::OpKind::AllToAll    ? interconnect::CollectiveKind::AllToAll
                            : k.op == kernels::OpKind::AllGather ? interconnect::CollectiveKind::AllGather
                                                                 : interconnect::CollectiveKind::AllReduce;
          const double t = interconnect::idle_collective_time(
              *topo, kind, interconnect::resolve_algorithm(kind, interconnect::CollectiveAlgorithm::Auto, tp, k.bytes),
              group, k.bytes);
          r.c = {t, 0, 0, 0, kernels::Bound::Communication, 1.0};
          r.roofline_s = t;
        } else {
          r.c = costs.cost(k);
          r.roofline_s = kernels::roofline_cost(k, gpu, kernels::kRooflineLaunchSeconds).seconds;
        }
        step_s += r.c.seconds * count;
        rows.push_back(r);
      }
    };
    add("pre", step.pre, 1);
    add("layer", step.per_layer, step.num_layers);
    add("post", step.post, 1);

    std::string csv =
        "section,kernel,op,phase,dtype,m,n,k,count,flops,bytes,intensity,predicted_us,roofline_us,bound,efficiency,"
        "achieved_tflops,total_us,share,peak_tflops,hbm_gbps\n";
    std::array<double, kernels::kNumBounds> by_bound{};
    for (const Row& r : rows) {
      const kernels::Kernel& k = *r.k;
      const bool comm = kernels::is_collective(k.op);
      const double total = r.c.seconds * r.count;
      by_bound[static_cast<std::size_t>(r.c.bound)] += total;
      csv += std::string(r.section) + "," + k.name + "," + std::string(kernels::op_name(k.op)) + "," +
             std::string(kernels::phase_name(k.phase)) + "," + std::string(kernels::dtype_name(k.dtype)) + "," +
             std::to_string(k.m) + "," + std::to_string(k.n) + "," + std::to_string(k.k) + "," +
             std::to_string(r.count) + "," + fmt("%.6e", k.flops) + "," + fmt("%.6e", k.bytes) + "," +
             (comm || k.bytes <= 0 ? "" : fmt("%.4g", k.flops / k.bytes)) + "," + fmt("%.4f", r.c.seconds * 1e6) + "," +
             fmt("%.4f", r.roofline_s * 1e6) + "," + std::string(kernels::bound_name(r.c.bound)) + "," +
             fmt("%.4f", r.c.efficiency) + "," + (comm ? "" : fmt("%.4f", k.flops / r.c.seconds / 1e12)) + "," +
             fmt("%.4f", total * 1e6) + "," + fmt("%.6f", step_s > 0 ? total / step_s : 0) + "," +
             (comm || !gpu.supports(k.dtype) ? "" : fmt("%.2f", gpu.peak(k.dtype) / 1e12)) + "," +
             fmt("%.2f", gpu.hbm_bandwidth / 1e9) + "\n";
    }
    if (out.empty()) {
      std::cout << csv;
    } else {
      util::write_file_atomically(out, csv);
    }
    std::cerr << "step of " << model.name << " on " << gpu.name << " (" << tier_text << ", tp " << tp << "): "
              << rows.size() << " kernels, GPU time " << fmt("%.1f", step_s * 1e6) << " us";
    for (std::size_t b = 0; b < by_bound.size(); ++b)
      if (by_bound[b] > 0)
        std::cerr << ", " << kernels::bound_name(static_cast<kernels::Bound>(b)) << " "
                  << fmt("%.0f", 100 * by_bound[b] / step_s) << "%";
    std::cerr << (out.empty() ? "" : "; wrote " + out) << "\n";
    return kExitOk;
  });
}

}  // namespace ks::app
