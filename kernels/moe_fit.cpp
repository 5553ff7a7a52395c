#include "kernels/moe_fit.hpp"

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "kernels/efficiency_fit.hpp"
#include "kernels/gpu_spec.hpp"

namespace ks::kernels {

MoeGemmCorrection fit_moe_gemm_correction(const EfficiencyModel& model_in, const std::vector<MoeLayerMeasurement>& layers) {
  constexpr std::size_t d = MoeGemmCorrection::kFeatures;
  EfficiencyModel model = model_in;
  model.moe_gemm = MoeGemmCorrection();  // attribute against the dense-GEMM pricing
  MoeGemmCorrection out;
  std::vector<double> rows, targets, weights;
  std::vector<std::size_t> family;
  std::map<std::string, std::size_t> family_ids;
  for (const MoeLayerMeasurement& l : layers) {
    if (l.shape.ep != 1) continue;
    const GpuSpec* gpu = find_builtin_gpu(l.gpu);
    if (gpu == nullptr) throw std::invalid_argument("MoE layer measurement of unknown GPU '" + l.gpu + "'");
    if (!gpu->supports(l.shape.dtype)) continue;
    const double source = other_source_flag(l.source);
    double others = 0, gemms = 0;
    for (const Kernel& k : l.kernels) (k.op == OpKind::MoeGemm ? gemms : others) += model.cost(k, *gpu, nullptr, source).seconds;
    const double attributed = l.seconds - others;
    if (!(gemms > 0) || attributed < 0.25 * l.seconds) {
      ++out.skipped;
      continue;
    }
    ++out.layers;
    const std::size_t id = family_ids.emplace(moe_layer_family(l.shape), family_ids.size()).first->second;
    for (const Kernel& k : l.kernels) {
      if (k.op != OpKind::MoeGemm) continue;
      const auto x = MoeGemmCorrection::features(k);
      rows.insert(rows.end(), x.begin(), x.end());
      targets.push_back(std::log(attributed / gemms));
      weights.push_back(1.0);
      family.push_back(id);
    }
  }
  if (targets.empty()) return out;
  double uncorrected = 0;
  for (const double y : targets) uncorrected += std::fabs(std::exp(-y) - 1.0);
  out.uncorrected_cv_mape = 100.0 * uncorrected / static_cast<double>(targets.size());
  out.selection = select_boost_options(rows, d, targets, weights, family);
  if (out.selection.folds == 0 || !(out.selection.cv_mape < out.uncorrected_cv_mape)) return out;
  out.trees.fit(rows, d, targets, weights, out.selection.options);
  return out;
}

}  // namespace ks::kernels
