// The expert-GEMM correction of the target tier (kernels/moe_correction.hpp, kernels/moe_fit.hpp):
// what it learns from whole MoE layers, when it is kept, and that it leaves spec changes to the bound.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/gpu_spec.hpp"
#include "kernels/moe_fit.hpp"
#include "kernels/moe_layer.hpp"
#include "kernels/spec_error.hpp"

using namespace ks::kernels;

namespace {

const GpuSpec& h100() { return *find_builtin_gpu("h100_sxm"); }

// Layers over a grid of 32 shape families, their times as `model` prices them except that the
// expert GEMMs take `slow(shape)` times as long.
template <typename Slow>
std::vector<MoeLayerMeasurement> layers(const EfficiencyModel& model, Slow slow, int ep = 1) {
  std::vector<MoeLayerMeasurement> out;
  for (std::int64_t hidden : {2048, 4096})
    for (std::int64_t inter : {1024, 2048, 4096, 8192})
      for (int tp : {1, 2, 8, 16})
        for (std::int64_t tokens : {1, 4, 16, 64, 256, 1024, 4096}) {
          MoeLayerMeasurement l;
          l.gpu = "h100_sxm";
          l.source = "aic-vllm-bf16";
          l.framework = "vllm";
          l.shape = {DType::BF16, tokens, hidden, inter, 8, 64, tp, ep};
          l.kernels = moe_layer_kernels(l.shape);
          for (const Kernel& k : l.kernels) {
            const double t = model.cost(k, h100()).seconds;
            l.seconds += k.op == OpKind::MoeGemm ? t * slow(l.shape) : t;
          }
          out.push_back(std::move(l));
        }
  return out;
}

double layer_seconds(const EfficiencyModel& model, const MoeLayerShape& shape) {
  double t = 0;
  for (const Kernel& k : moe_layer_kernels(shape)) t += model.cost(k, h100()).seconds;
  return t;
}

// Narrow experts (under 512 columns per rank after the TP split) run at half speed.
double narrow_is_slow(const MoeLayerShape& s) { return s.inter / s.tp < 512 ? 2.0 : 1.0; }

}  // namespace

TEST(MoeCorrection, LearnsWhatTheLayersTookBeyondDenseGemmsAndPricesAnUnseenFamily) {
  EfficiencyModel model;
  EfficiencyModel corrected = model;
  corrected.moe_gemm = fit_moe_gemm_correction(model, layers(model, narrow_is_slow));
  ASSERT_FALSE(corrected.moe_gemm.empty());
  EXPECT_EQ(corrected.moe_gemm.layers, 224u);
  EXPECT_LT(corrected.moe_gemm.selection.cv_mape, corrected.moe_gemm.uncorrected_cv_mape);
  // A family the fit never saw (hidden 3072, 6 experts per token): narrow and wide.
  for (const auto& [inter, tp] : {std::pair<std::int64_t, int>{1536, 8}, {6144, 2}}) {
    const MoeLayerShape s{DType::BF16, 512, 3072, inter, 6, 64, tp, 1};
    double others = 0, gemms = 0;
    for (const Kernel& k : moe_layer_kernels(s)) (k.op == OpKind::MoeGemm ? gemms : others) += model.cost(k, h100()).seconds;
    const double want = others + gemms * narrow_is_slow(s);
    EXPECT_NEAR(layer_seconds(corrected, s) / want, 1.0, 0.15) << "inter " << inter << " tp " << tp;
    if (narrow_is_slow(s) > 1) {
      EXPECT_LT(layer_seconds(model, s) / want, 0.75) << "the uncorrected model is far off";
    }
  }
}

TEST(MoeCorrection, NoiseThatFollowsNoShapeIsNotKept) {
  EfficiencyModel model;
  std::mt19937 rng(7);
  std::lognormal_distribution<double> noise(0.0, 0.3);
  const auto c = fit_moe_gemm_correction(model, layers(model, [&](const MoeLayerShape&) { return noise(rng); }));
  EXPECT_GT(c.selection.folds, 0u);
  EXPECT_TRUE(c.empty()) << "cv " << c.selection.cv_mape << "% vs " << c.uncorrected_cv_mape << "% uncorrected";
}

TEST(MoeCorrection, ExpertParallelLayersAreNotFitted) {
  EfficiencyModel model;
  const auto c = fit_moe_gemm_correction(model, layers(model, narrow_is_slow, 4));
  EXPECT_EQ(c.layers, 0u);
  EXPECT_TRUE(c.empty());
}

// The correction is read from the kernel's shape alone: a what-if spec moves a corrected expert
// GEMM by exactly the factor it moves an uncorrected one, the factor the bound sets.
TEST(MoeCorrection, ASpecChangeMovesACorrectedExpertGemmAsTheBoundSays) {
  EfficiencyModel model;
  EfficiencyModel corrected = model;
  corrected.moe_gemm = fit_moe_gemm_correction(model, layers(model, narrow_is_slow));
  ASSERT_FALSE(corrected.moe_gemm.empty());
  GpuSpec fast = h100();
  for (auto& [dtype, peak] : fast.peak_flops) peak *= 2;
  fast.hbm_bandwidth *= 2;
  for (const Kernel& k : moe_layer_kernels({DType::BF16, 2048, 4096, 2048, 8, 64, 8, 1})) {
    if (k.op != OpKind::MoeGemm) continue;
    const double plain = model.cost(k, fast, &h100()).seconds / model.cost(k, h100()).seconds;
    const double with = corrected.cost(k, fast, &h100()).seconds / corrected.cost(k, h100()).seconds;
    EXPECT_NEAR(with, plain, 1e-9) << k.name;
    EXPECT_LT(plain, 0.75) << k.name;  // twice the FLOP/s and bandwidth: well under the old time
  }
}

TEST(MoeCorrection, RoundTripsThroughACalibrationFile) {
  EfficiencyModel model;
  model.moe_gemm = fit_moe_gemm_correction(EfficiencyModel(), layers(EfficiencyModel(), narrow_is_slow));
  ASSERT_FALSE(model.moe_gemm.empty());
  const EfficiencyModel back = EfficiencyModel::from_yaml(model.to_yaml(), "cal.yaml");
  EXPECT_EQ(back.moe_gemm.layers, model.moe_gemm.layers);
  for (const Kernel& k : moe_layer_kernels({DType::BF16, 300, 4096, 1024, 8, 64, 4, 1}))
    EXPECT_DOUBLE_EQ(back.cost(k, h100()).seconds, model.cost(k, h100()).seconds) << k.name;
  // A file without the section prices expert GEMMs as dense GEMMs; a broken one names the section.
  std::string text = model.to_yaml();
  const auto at = text.find("uncorrected_cv_mape_pct:");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("uncorrected_cv_mape_pct:").size(), "uncorrected_cv_mape_pct: [1],");
  try {
    EfficiencyModel::from_yaml(text, "cal.yaml");
    FAIL() << "a broken moe_gemm_correction was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("cal.yaml"), std::string::npos) << e.what();
  }
}
