// `kernelsight calibrate`: fit the target tier of the kernel model on a sweep of one GPU.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>
#include <stdexcept>

#include "app/cli_options.hpp"
#include "app/measurement_inputs.hpp"
#include "base/util/csv.hpp"
#include "kernels/attention_backend.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/moe_fit.hpp"
#include "kernels/tiers.hpp"
#include "base/util/atomic_file.hpp"

namespace po = boost::program_options;

namespace ks::app {

namespace {
void report_moe(const kernels::MoeGemmCorrection& c) {
  std::cerr << "moe_gemm correction: " << c.layers << " layers with ep = 1 (" << c.skipped << " skipped); ";
  if (c.selection.folds == 0) {
    std::cerr << "too few layer families to cross-validate: none\n";
    return;
  }
  std::cerr << c.selection.folds << "-fold CV over " << c.selection.families << " layer families: " << c.selection.cv_mape
            << "% with depth " << c.selection.options.depth << ", learning rate " << c.selection.options.learning_rate
            << ", " << c.selection.options.trees << " trees, " << c.uncorrected_cv_mape << "% without: "
            << (c.empty() ? "not kept" : "kept") << "\n";
}
}  // namespace

int cmd_calibrate(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight calibrate --gpu G (--vidur DIR | --gemm-table F | --sweep F)... -o calibration.yaml\n"
      "kernelsight calibrate --cross-gen [--gpu G | --leave-out G1,G2] [--framework F] [--sweeps-dir D] -o cg.yaml\n\n"
      "Fits the kernel efficiency model to measurements of GPU G (the target tier). The cross-gen\n"
      "model (fitted on the shipped sweeps of the other GPUs) is the prior the fit starts from and\n"
      "is pulled towards, so a small sweep corrects it rather than replacing it.\n"
      "With --cross-gen: fits the cross-generation model on the sweeps, leaving GPU G (or every GPU of\n"
      "--leave-out: a whole generation, e.g. h100_sxm,h200) out; --framework F fits the classes engine F\n"
      "measured (trtllm, vllm, sglang) on its rows only.\n"
      "With --attention-backend B: fits only the attention rows of backend B (fa2, fa3, fa4, flashinfer,\n"
      "trtllm, triton): B's own attention calibration, named <engine calibration>.attention-B.yaml so\n"
      "that hardware.gpu.attention_backend finds it.\n"
      "With --moe F (repeatable; data/moe/...): also fits the correction of grouped expert GEMMs on\n"
      "G's whole MoE layers (of engine --framework F when given; kernels/moe_fit.hpp); with\n"
      "--calibration BASE, only that correction, onto BASE.\n\noptions");
  MeasurementInputs in;
  std::string out, models, sweeps_dir, leave_out, framework, holdout, backend, base;
  std::vector<std::string> moe_files;
  bool cross_gen = false;
  opts.add_options()("help,h", "show this help")("gpu", po::value(&in.gpu), "catalog name of the GPU")(
      "cross-gen", po::bool_switch(&cross_gen), "fit the cross-generation model instead")(
      "vidur", po::value(&in.vidur), "Vidur profiling folder (repeatable)")(
      "gemm-table", po::value(&in.gemm_tables), "GEMM table CSV (repeatable)")(
      "sweep", po::value(&in.sweeps), "sweep CSV (repeatable)")(
      "moe", po::value(&moe_files), "MoE layer CSV (repeatable): fit the expert-GEMM correction on its layers")(
      "calibration", po::value(&base),
      "with --gpu and --moe: start from this calibration file and fit only its expert-GEMM correction")(
      "models", po::value(&models), "use only these models' rows (comma-separated, e.g. llama-2-7b-hf)")(
      "sweeps-dir", po::value(&sweeps_dir), "sweeps for the cross-gen prior (default: shipped data)")(
      "leave-out", po::value(&leave_out), "with --cross-gen: GPUs not fitted (comma-separated)")(
      "framework", po::value(&framework), "engine whose kernels to fit (trtllm, vllm, sglang; default: all rows)")(
      "attention-backend", po::value(&backend),
      "fit only this attention backend's rows (fa2, fa3, fa4, flashinfer, trtllm, triton)")(
      "holdout-fold", po::value(&holdout),
      "I/K: leave shape-family fold I of K out of the fit (validate on it with validate --fold I/K); "
      "I,J,.../K leaves several out (a split nested in another's training folds)")(
      "out,o", po::value(&out)->required(), "calibration file to write");
  po::variables_map vm;
  if (int rc = parse_options("calibrate", args, opts, vm); rc >= 0) return rc;
  if (!backend.empty() && !kernels::is_attention_backend(backend)) {
    std::cerr << "kernelsight calibrate: unknown --attention-backend '" << backend << "' (known: " << kernels::attention_backend_list() << ")\n";
    return kExitBadInput;
  }
  if (cross_gen) {
    return run_reporting_errors([&] {
      // Engines run other MoE kernels on other generations (vLLM: Triton on L40S, FlashInfer's
      // CUTLASS on Hopper, TensorRT-LLM's on Blackwell): a correction learned on some does not
      // carry (docs/kernel-model.md, "MoE layers").
      if (!moe_files.empty())
        throw std::invalid_argument("--moe fits the target tier of one GPU (--gpu G), not the cross-gen model");
      kernels::CrossGenOptions options;
      options.leave_out = split_gpus(leave_out);
      if (!in.gpu.empty()) options.leave_out.push_back(in.gpu);
      options.framework = framework;
      options.attention_backend = backend;
      const auto sweeps = kernels::load_sweeps(sweeps_dir);
      if (!backend.empty()) {
        // A backend's calibration rests on that engine's own rows of it (TensorRT-LLM has no FA3).
        std::size_t own = 0;
        for (const auto& m : kernels::attention_rows_of(sweeps, backend))
          if (std::find(options.leave_out.begin(), options.leave_out.end(), m.gpu) == options.leave_out.end() &&
              (framework.empty() || kernels::row_framework(m) == framework))
            ++own;
        if (own == 0)
          throw std::invalid_argument("no attention rows of backend '" + backend + "'" +
                                      (framework.empty() ? std::string() : " under " + framework) +
                                      " in the sweeps that stay in");
      }
      kernels::EfficiencyModel model = kernels::fit_cross_gen(sweeps, options);
      util::write_file_atomically(out, model.to_yaml());
      std::cerr << "wrote " << out << "\n";
      return kExitOk;
    });
  }
  if (in.gpu.empty()) {
    std::cerr << "kernelsight calibrate: --gpu is required (the GPU the measurements are of)\n";
    return kExitBadInput;
  }
  if (kernels::find_builtin_gpu(in.gpu) == nullptr) {
    std::cerr << "kernelsight calibrate: unknown GPU '" << in.gpu << "' (see kernelsight list)\n";
    return kExitBadInput;
  }
  in.only_models = split_models(models);
  if (!base.empty()) {
    return run_reporting_errors([&] {
      if (moe_files.empty() || !in.sweeps.empty() || !in.vidur.empty() || !in.gemm_tables.empty() || !backend.empty())
        throw std::invalid_argument("--calibration refits only the expert-GEMM correction: it takes --moe files and no "
                                    "kernel measurements or --attention-backend");
      if (!holdout.empty()) parse_fold("--holdout-fold", holdout, in, true);
      kernels::EfficiencyModel model = kernels::EfficiencyModel::load(base);
      model.moe_gemm = kernels::fit_moe_gemm_correction(model, load_moe_layers(moe_files, in, framework));
      report_moe(model.moe_gemm);
      util::write_file_atomically(out, model.to_yaml());
      std::cerr << "wrote " << out << "\n";
      return kExitOk;
    });
  }
  return run_reporting_errors([&] {
    if (!holdout.empty()) parse_fold("--holdout-fold", holdout, in, true);
    auto rows = load_measurements(in);
    if (!backend.empty()) {
      auto selected = kernels::attention_rows_of(rows, backend);
      if (selected.empty()) {
        std::set<std::string> have;
        for (const auto& m : rows)
          if (auto b = kernels::row_attention_backend(m); !b.empty()) have.insert(b);
        std::string list;
        for (const auto& b : have) list += (list.empty() ? "" : ", ") + b;
        throw std::invalid_argument("no attention rows of backend '" + backend + "' in the measurements (backends: " +
                                 (list.empty() ? "none recorded" : list) + ")");
      }
      rows = std::move(selected);
    }
    kernels::CrossGenOptions prior_options;
    prior_options.leave_out = {in.gpu};
    prior_options.framework = framework;
    const auto prior = kernels::fit_cross_gen(kernels::load_sweeps(sweeps_dir), prior_options);
    kernels::EfficiencyModel model = kernels::fit_target(rows, prior);
    model.description += " (" + std::to_string(rows.size()) + " measurements of " + in.gpu +
                         (models.empty() ? "" : ", models " + models) +
                         (backend.empty() ? "" : ", " + backend + " attention only") + ")";
    if (!backend.empty()) kernels::keep_fitted_attention(model, rows, backend);
    if (!moe_files.empty()) {
      if (!backend.empty()) throw std::invalid_argument("--moe with --attention-backend: a backend's file holds attention only");
      model.moe_gemm = kernels::fit_moe_gemm_correction(model, load_moe_layers(moe_files, in, framework));
      report_moe(model.moe_gemm);
    }
    util::write_file_atomically(out, model.to_yaml());
    for (std::size_t c = 0; c < kernels::kNumKernelClasses; ++c) {
      const auto cls = static_cast<kernels::KernelClass>(c);
      const kernels::BoostSelection& s = model.params(cls).residual_selection;
      if (s.folds == 0) continue;
      std::cerr << kernels::class_name(cls) << " residual: depth " << s.options.depth << ", learning rate "
                << s.options.learning_rate << ", " << s.options.trees << " trees (" << s.folds << "-fold CV over "
                << s.families << " shape families: " << s.cv_mape << "%)\n";
      const kernels::ResidualFade& fade = model.params(cls).residual_fade;
      if (fade.probe_rows > 0) {
        std::cerr << kernels::class_name(cls) << " residual beyond log2(M x batch) = " << fade.max_log2_work << ": ";
        if (std::isinf(fade.octaves))
          std::cerr << "no fade";
        else
          std::cerr << "fades over " << fade.octaves << " octaves";
        std::cerr << " (extrapolation probe, " << fade.probe_rows << " rows: " << fade.probe_mape << "%, "
                  << fade.flat_probe_mape << "% without a fade)\n";
      }
      const kernels::MeasuredFamilies& measured = model.params(cls).measured;
      if (measured.probe_rows > 0)
        std::cerr << kernels::class_name(cls) << " measured families: "
                  << (measured.empty() ? "not kept" : std::to_string(measured.size()) + " kept")
                  << " (left-out-point probe, " << measured.probe_rows << " rows: " << measured.probe_mape
                  << "% from the neighbouring points, " << measured.model_probe_mape << "% from the class model; "
                  << "better in " << measured.probe_better_in << " of " << measured.probe_families << " families)\n";
    }
    std::cerr << "calibrated on " << rows.size() << " measurements; wrote " << out << "\n";
    return kExitOk;
  });
}

}  // namespace ks::app
