// `kernelsight validate`: per-operator error of a tier and of the roofline on measured kernels.
#include <algorithm>
#include <iostream>

#include "app/cli_options.hpp"
#include "app/measurement_inputs.hpp"
#include "base/util/csv.hpp"
#include "kernels/attention_backend.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/moe_layer.hpp"
#include "kernels/tiers.hpp"
#include "kernels/validation.hpp"
#include "base/util/atomic_file.hpp"

#include <cstdio>
#include <stdexcept>
#include "kernels/efficiency_fit.hpp"
#include "kernels/family_errors.hpp"

namespace po = boost::program_options;

namespace ks::app {

int cmd_validate(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight validate (--vidur DIR | --sweep F | --gemm-table F | --moe F) --gpu G --tier T [--calibration F]\n\n"
      "Prints the per-operator MAPE and median error of tier T and of the roofline on every\n"
      "measurement of GPU G. cross-gen fits on the shipped sweeps of every other GPU (or uses\n"
      "--calibration); target needs --calibration (from `kernelsight calibrate`). --moe rows are\n"
      "whole MoE layers (kernels/moe_layer.hpp), priced as the sum of the kernels the simulator runs\n"
      "for them (with the calibration's expert-GEMM correction, if it has one).\n\noptions");
  MeasurementInputs in;
  std::string tier_text, calibration, exclude, sweeps_dir, rows_out, moe_rows_out, leave_out, framework, fold, backend,
      calibrated_gpu;
  std::vector<std::string> moe_files;
  bool without_moe_correction = false;
  int families = 0;
  opts.add_options()("help,h", "show this help")("gpu", po::value(&in.gpu)->required(), "catalog name of the GPU")(
      "tier", po::value(&tier_text)->required(), "roofline | cross-gen | target")(
      "calibration", po::value(&calibration), "calibration file (target tier, or a saved cross-gen model)")(
      "vidur", po::value(&in.vidur), "Vidur profiling folder (repeatable)")(
      "gemm-table", po::value(&in.gemm_tables), "GEMM table CSV (repeatable)")(
      "sweep", po::value(&in.sweeps), "sweep CSV (repeatable)")(
      "moe", po::value(&moe_files), "MoE layer CSV (data/moe/...; repeatable): G's rows, scored as classes 'moe <dtype>' and, under "
      "expert parallelism, 'moe-ep <dtype>'")(
      "exclude-models", po::value(&exclude), "skip these models' rows (e.g. the ones calibrated on)")(
      "sweeps-dir", po::value(&sweeps_dir), "sweeps the cross-gen tier fits on (default: shipped data)")(
      "leave-out", po::value(&leave_out), "cross-gen: more GPUs not fitted, e.g. the GPU's generation (comma-separated)")(
      "framework", po::value(&framework), "cross-gen: fit engine F's kernels (trtllm, vllm, sglang) where it measured them")(
      "fold", po::value(&fold), "I/K: only the rows of shape-family fold I of K (those calibrate --holdout-fold I/K left out); I,J,.../K: "
      "of several. MoE layers fold by their family (kernels::moe_layer_fold)")(
      "attention-backend", po::value(&backend),
      "only the attention rows of this backend (fa2, fa3, fa4, flashinfer, trtllm, triton): what calibrate "
      "--attention-backend fitted")(
      "calibrated-gpu", po::value(&calibrated_gpu),
      "price G's rows as a what-if of this GPU (catalog name): the calibration's learned correction is read at "
      "its spec, G's spec moves the roofline-shaped terms (--gpu h200 --calibrated-gpu h100_sxm: an H100 "
      "calibration with the H200's bandwidth), as a scenario that overrides spec fields prices")(
      "families", po::value(&families), "also list the N shape families (one GEMM's N x K, one attention head layout, "
      "one norm's width) with the largest share of the tier's summed error: where it sits")(
      "rows-out", po::value(&rows_out), "also write every sweep row with its measured and predicted times (CSV)")(
      "moe-rows-out", po::value(&moe_rows_out), "also write every MoE layer row with its measured and predicted times (CSV)")(
      "without-moe-correction", po::bool_switch(&without_moe_correction),
      "price expert GEMMs as dense GEMMs, ignoring the calibration's MoE correction (what it is worth)");
  po::variables_map vm;
  if (int rc = parse_options("validate", args, opts, vm); rc >= 0) return rc;
  const auto tier = kernels::parse_tier(tier_text);
  if (!tier) {
    std::cerr << "kernelsight validate: --tier must be roofline, cross-gen or target, got '" << tier_text << "'\n";
    return kExitBadInput;
  }
  if (*tier == kernels::Tier::Target && calibration.empty()) {
    std::cerr << "kernelsight validate: --tier target needs --calibration (see kernelsight calibrate)\n";
    return kExitBadInput;
  }
  const kernels::GpuSpec* gpu = kernels::find_builtin_gpu(in.gpu);
  if (gpu == nullptr) {
    std::cerr << "kernelsight validate: unknown GPU '" << in.gpu << "' (see kernelsight list)\n";
    return kExitBadInput;
  }
  const kernels::GpuSpec* calibrated = nullptr;
  if (!calibrated_gpu.empty()) {
    calibrated = kernels::find_builtin_gpu(calibrated_gpu);
    if (calibrated == nullptr) {
      std::cerr << "kernelsight validate: unknown --calibrated-gpu '" << calibrated_gpu << "' (see kernelsight list)\n";
      return kExitBadInput;
    }
    if (*tier == kernels::Tier::Roofline) {
      std::cerr << "kernelsight validate: --calibrated-gpu needs a learned tier (cross-gen or target), not roofline\n";
      return kExitBadInput;
    }
  }
  if (!backend.empty() && !kernels::is_attention_backend(backend)) {
    std::cerr << "kernelsight validate: unknown --attention-backend '" << backend << "' (known: " << kernels::attention_backend_list() << ")\n";
    return kExitBadInput;
  }
  if (families < 0) {
    std::cerr << "kernelsight validate: --families must be a count >= 0, got " << families << "\n";
    return kExitBadInput;
  }
  in.exclude_models = split_models(exclude);
  return run_reporting_errors([&] {
    if (!fold.empty()) parse_fold("--fold", fold, in, false);
    const auto layers = load_moe_layers(moe_files, in, "");
    const bool kernel_rows = !in.sweeps.empty() || !in.vidur.empty() || !in.gemm_tables.empty() || moe_files.empty();
    std::vector<kernels::Measurement> rows;
    if (kernel_rows) rows = load_measurements(in);
    if (!backend.empty()) {
      rows = kernels::attention_rows_of(rows, backend);
      if (rows.empty())
        throw std::invalid_argument("--attention-backend " + backend + ": no attention rows of that backend in the "
                                    "measurements of " + in.gpu + " (the sweep's kernel_source column names it)");
    }
    kernels::EfficiencyModel model;
    if (!calibration.empty())
      model = kernels::EfficiencyModel::load(calibration);
    else if (*tier == kernels::Tier::CrossGen) {
      kernels::CrossGenOptions options;
      options.leave_out = split_gpus(leave_out);
      options.leave_out.push_back(in.gpu);
      options.framework = framework;
      model = kernels::fit_cross_gen(kernels::load_sweeps(sweeps_dir), options);
    }
    if (without_moe_correction) model.moe_gemm = kernels::MoeGemmCorrection();
    // A target calibration's correction belongs to the GPU it was fitted on: read at another
    // spec it would price plausible-looking nonsense.
    if (calibrated != nullptr && *tier == kernels::Tier::Target && !model.trained_on.empty() &&
        std::find(model.trained_on.begin(), model.trained_on.end(), calibrated->name) == model.trained_on.end()) {
      std::string fitted_on;
      for (const std::string& g : model.trained_on) fitted_on += (fitted_on.empty() ? "" : ", ") + g;
      throw std::invalid_argument("--calibrated-gpu " + calibrated->name + ": " + calibration + " was fitted on " +
                                  fitted_on + ", not on it");
    }
    const auto roofline_kernel = [&](const kernels::Kernel& k) {
      return kernels::roofline_cost(k, *gpu, kernels::kRooflineLaunchSeconds).seconds;
    };
    // The cross-gen fit flags rows by source (the target fit takes every row as the engine's own);
    // both price the rows of sources that replay a kernel warm, as they fitted them.
    const auto tier_kernel = [&](const kernels::Kernel& k, const std::string& source_name) {
      if (*tier == kernels::Tier::Roofline) return roofline_kernel(k);
      const double source = *tier == kernels::Tier::CrossGen ? kernels::other_source_flag(source_name) : 0.0;
      const int replayed = kernels::replayed_copies(source_name, k);
      return model.cost(k, *gpu, calibrated, source, replayed).seconds;
    };
    const kernels::Predictor roofline = [&](const kernels::Measurement& m) { return roofline_kernel(m.kernel); };
    const kernels::Predictor predict = [&](const kernels::Measurement& m) { return tier_kernel(m.kernel, m.source); };
    std::vector<kernels::ScoredRow> scored;
    if (!rows.empty()) scored = kernels::evaluate_rows(rows, predict, roofline);
    // A layer is the sum of its kernels, each priced as the simulator prices it.
    std::vector<std::pair<double, double>> layer_times;
    for (const auto& l : layers) {
      double t = 0, r = 0;
      for (const kernels::Kernel& k : l.kernels) {
        t += tier_kernel(k, l.source);
        r += roofline_kernel(k);
      }
      layer_times.emplace_back(t, r);
      scored.push_back({"moe_layer", kernels::moe_layer_class(l.shape), "moe", l.seconds, t, r});
    }
    std::cout << kernels::format_report(kernels::evaluate(scored), std::string(kernels::tier_name(*tier)));
    if (families > 0 && !rows.empty())
      std::cout << kernels::format_families(kernels::family_errors(rows, predict), static_cast<std::size_t>(families));
    if (!moe_rows_out.empty()) {
      std::string csv = "gpu,framework,kernel_source,dtype,tokens,hidden,inter,top_k,experts,tp,ep,measured_us,"
                        "predicted_us,roofline_us\n";
      char buf[512];
      for (std::size_t i = 0; i < layers.size(); ++i) {
        const auto& l = layers[i];
        const auto& s = l.shape;
        std::snprintf(buf, sizeof buf, "%s,%s,%s,%s,%lld,%lld,%lld,%d,%d,%d,%d,%.6g,%.6g,%.6g\n", l.gpu.c_str(),
                      l.framework.c_str(), l.kernel_source.c_str(), std::string(kernels::dtype_name(s.dtype)).c_str(),
                      static_cast<long long>(s.tokens), static_cast<long long>(s.hidden),
                      static_cast<long long>(s.inter), s.top_k, s.experts, s.tp, s.ep, l.seconds * 1e6,
                      layer_times[i].first * 1e6, layer_times[i].second * 1e6);
        csv += buf;
      }
      util::write_file_atomically(moe_rows_out, csv);
    }
    if (!rows_out.empty()) {
      std::string csv = "model,label,op,class,dtype,m,n,k,tokens,hidden,measured_us,predicted_us,roofline_us,"
                        "batch,heads,kv_heads,head_dim,q_len,kv_len\n";
      char buf[512];
      for (const auto& m : rows) {
        kernels::KernelClass cls;
        const std::string cls_name =
            kernels::kernel_class(m.kernel.op, &cls) ? std::string(kernels::class_name(cls)) : std::string("-");
        std::snprintf(buf, sizeof buf, "%s,%s,%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%.6g,%.6g,%.6g,%lld,%lld,%lld,%lld,%lld,%lld\n", m.model.c_str(),
                      m.label.c_str(), m.shape.op.c_str(), cls_name.c_str(),
                      std::string(kernels::dtype_name(m.kernel.dtype)).c_str(), static_cast<long long>(m.shape.m),
                      static_cast<long long>(m.shape.n), static_cast<long long>(m.shape.k),
                      static_cast<long long>(m.shape.tokens), static_cast<long long>(m.shape.hidden),
                      m.seconds * 1e6, predict(m) * 1e6, roofline(m) * 1e6, static_cast<long long>(m.shape.batch),
                      static_cast<long long>(m.shape.heads), static_cast<long long>(m.shape.kv_heads),
                      static_cast<long long>(m.shape.head_dim), static_cast<long long>(m.shape.q_len),
                      static_cast<long long>(m.shape.kv_len));
        csv += buf;
      }
      util::write_file_atomically(rows_out, csv);
    }
    return kExitOk;
  });
}

}  // namespace ks::app
