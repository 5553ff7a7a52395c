#include "kernels/tiers.hpp"

#include <algorithm>
#include <array>
#include <filesystem>

#include "base/util/csv.hpp"
#include "base/util/data_dir.hpp"
#include "kernels/attention_backend.hpp"

namespace ks::kernels {

std::optional<Tier> parse_tier(std::string_view name) {
  if (name == "roofline") return Tier::Roofline;
  if (name == "cross-gen" || name == "cross_gen") return Tier::CrossGen;
  if (name == "target") return Tier::Target;
  return std::nullopt;
}

std::string_view tier_name(Tier tier) {
  switch (tier) {
    case Tier::Roofline: return "roofline";
    case Tier::CrossGen: return "cross-gen";
    case Tier::Target: return "target";
  }
  return "?";
}

std::vector<Measurement> load_sweeps(const std::string& dir_in) {
  namespace fs = std::filesystem;
  const std::string dir = dir_in.empty() ? data_dir() + "/sweeps" : dir_in;
  if (!fs::is_directory(dir)) throw CsvError(dir + ": sweep folder not found (set KERNELSIGHT_DATA_DIR?)");
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && fs::exists(it->path() / kHeldOutMarker)) {
      it.disable_recursion_pending();  // a test set: no fit may read it
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".csv") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Measurement> rows;
  for (const auto& f : files) {
    auto part = read_sweep(f.string());
    rows.insert(rows.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return rows;
}

std::string row_framework(const Measurement& m) {
  if (!m.framework.empty()) return m.framework;
  if (m.source.rfind("aic-", 0) == 0) {
    const auto dash = m.source.find('-', 4);
    return m.source.substr(4, dash == std::string::npos ? std::string::npos : dash - 4);
  }
  return "";
}

std::string row_attention_backend(const Measurement& m) {
  if (m.kernel.op != OpKind::AttentionPrefill && m.kernel.op != OpKind::AttentionDecode) return "";
  return attention_backend_of(row_framework(m), m.kernel_source);
}

std::vector<Measurement> attention_rows_of(const std::vector<Measurement>& rows, const std::string& backend) {
  std::vector<Measurement> out;
  for (const Measurement& m : rows)
    if (row_attention_backend(m) == backend) out.push_back(m);
  return out;
}

void keep_fitted_attention(EfficiencyModel& model, const std::vector<Measurement>& rows, const std::string& backend) {
  std::array<std::size_t, kNumKernelClasses> count{};
  for (const Measurement& m : rows) {
    KernelClass c;
    if (kernel_class(m.kernel.op, &c)) ++count[static_cast<std::size_t>(c)];
  }
  const FitOptions defaults;
  for (std::size_t c = 0; c < kNumKernelClasses; ++c) {
    const auto cls = static_cast<KernelClass>(c);
    const bool attention = cls == KernelClass::AttentionPrefill || cls == KernelClass::AttentionDecode;
    if (!attention || count[c] < defaults.min_rows) model.params(cls) = EfficiencyModel().params(cls);
  }
  model.attention_backend = backend;
}

EfficiencyModel fit_cross_gen(const std::vector<Measurement>& sweeps_in, const CrossGenOptions& options) {
  std::vector<Measurement> backend_rows;
  if (!options.attention_backend.empty()) backend_rows = attention_rows_of(sweeps_in, options.attention_backend);
  const std::vector<Measurement>& sweeps = options.attention_backend.empty() ? sweeps_in : backend_rows;
  auto left_out = [&](const std::string& gpu) {
    return std::find(options.leave_out.begin(), options.leave_out.end(), gpu) != options.leave_out.end();
  };
  // Classes the engine's own rows cover (on the GPUs that stay in).
  std::array<std::size_t, kNumKernelClasses> engine_rows{};
  if (!options.framework.empty())
    for (const Measurement& m : sweeps) {
      KernelClass c;
      if (!left_out(m.gpu) && kernel_class(m.kernel.op, &c) && row_framework(m) == options.framework)
        ++engine_rows[static_cast<std::size_t>(c)];
    }
  std::vector<Measurement> rows;
  for (const Measurement& m : sweeps) {
    if (left_out(m.gpu)) continue;
    KernelClass c;
    if (kernel_class(m.kernel.op, &c) && engine_rows[static_cast<std::size_t>(c)] >= 8 &&
        row_framework(m) != options.framework)
      continue;
    rows.push_back(m);
  }
  FitOptions fit;
  fit.transferable_elementwise = true;
  fit.transferable_decode = true;
  fit.attention_floor_in_cycles = true;
  fit.warm_l2_rows = true;
  // A backend's rows start from (and are pulled towards) the engine's fit on the same GPUs, so a
  // term they cannot identify (the copy engine where no Hopper or Blackwell GPU ran the backend,
  // the warm-L2 rate) keeps the engine's value rather than the default's. Classes fit
  // independently, so the engine's attention rows alone give its attention classes.
  EfficiencyModel engine_fit;
  if (!options.attention_backend.empty()) {
    std::vector<Measurement> attention;
    for (const Measurement& m : sweeps_in)
      if (m.kernel.op == OpKind::AttentionPrefill || m.kernel.op == OpKind::AttentionDecode) attention.push_back(m);
    CrossGenOptions engine_options = options;
    engine_options.attention_backend.clear();
    engine_fit = fit_cross_gen(attention, engine_options);
    fit.prior = &engine_fit;
  }
  EfficiencyModel model = fit_efficiency(rows, fit);
  std::string without;
  for (const std::string& g : options.leave_out) without += (without.empty() ? "" : ", ") + g;
  model.description = "cross-gen: fitted " + (without.empty() ? std::string("on every sweep") : "without measurements of " + without) +
                      (options.framework.empty() ? "" : ", " + options.framework + " kernels where measured") +
                      (options.attention_backend.empty() ? "" : ", " + options.attention_backend + " attention only");
  if (!options.attention_backend.empty()) keep_fitted_attention(model, rows, options.attention_backend);
  return model;
}

EfficiencyModel fit_cross_gen(const std::vector<Measurement>& sweeps, const std::string& target_gpu) {
  CrossGenOptions options;
  if (!target_gpu.empty()) options.leave_out.push_back(target_gpu);
  EfficiencyModel model = fit_cross_gen(sweeps, options);
  if (!target_gpu.empty()) model.description = "cross-gen: fitted without measurements of " + target_gpu;
  return model;
}

EfficiencyModel fit_target(const std::vector<Measurement>& target_rows, const EfficiencyModel& prior) {
  FitOptions options;
  options.prior = &prior;
  options.residual_trees = true;
  options.select_residual = true;
  options.measured_families = true;
  options.rows_are_engine_source = true;
  // Its tables were timed warm where the collector replays a kernel, as the cross-gen fit's were;
  // a serving step's kernels are cold. Fitted cold, the benchmark's L2 would be learnt as the
  // GPU's efficiency and priced into every simulated small GEMM and in-L2 decode.
  options.warm_l2_rows = true;
  // An engine's fp8 and fp4 GEMMs quantise their own input: a pass over M x K that no efficiency
  // of the product can stand for (a router's N = 32 spends most of its time there). Chosen on
  // folds 1-2 of the target protocol (docs/kernel-model.md, "Narrow GEMMs quantise their own input").
  options.quantisation_term = true;
  // A 16-bit GEMM with fewer output tiles than SMs splits K and reduces in a second launch.
  // Chosen on folds 1-2 of the target protocol (docs/kernel-model.md, "Split-K GEMMs").
  options.gemm_split_k = true;
  EfficiencyModel model = fit_efficiency(target_rows, options);
  model.description = "target: fitted on a sweep of the target GPU, cross-gen model as prior";
  return model;
}

}  // namespace ks::kernels
