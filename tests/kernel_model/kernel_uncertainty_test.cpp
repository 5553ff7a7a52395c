// The kernel model's uncertainty: the residual-quantile file, the per-class time multipliers a
// sample applies, and the shipped file's sanity (bands that bracket 1 and widen outwards).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "kernels/gpu_catalog.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "kernels/kernel_uncertainty.hpp"

using namespace ks::kernels;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path) {
  try {
    KernelUncertainty::load(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(KernelUncertainty, InterpolatesTheRatioBetweenStoredQuantiles) {
  const std::string path = write_temp("ks_unc_ok.yaml",
                                      "probabilities: [0.1, 0.5, 0.9]\n"
                                      "tiers:\n"
                                      "  cross-gen:\n"
                                      "    gemm: {rows: 10, log_ratio: [-0.2, 0.0, 0.4]}\n");
  const KernelUncertainty u = KernelUncertainty::load(path);
  // Halfway between p = 0.5 (ln 0) and p = 0.9 (ln 0.4): ln 0.2.
  EXPECT_NEAR(u.ratio_quantile(Tier::CrossGen, KernelClass::Gemm, 0.7), std::exp(0.2), 1e-12);
  EXPECT_NEAR(u.ratio_quantile(Tier::CrossGen, KernelClass::Gemm, 0.5), 1.0, 1e-12);
  // Clamped to the outermost quantiles.
  EXPECT_NEAR(u.ratio_quantile(Tier::CrossGen, KernelClass::Gemm, 0.01), std::exp(-0.2), 1e-12);
  EXPECT_NEAR(u.ratio_quantile(Tier::CrossGen, KernelClass::Gemm, 0.999), std::exp(0.4), 1e-12);
  // A class or tier without residuals is taken as predicted.
  EXPECT_EQ(u.ratio_quantile(Tier::CrossGen, KernelClass::Norm, 0.9), 1.0);
  EXPECT_EQ(u.ratio_quantile(Tier::Target, KernelClass::Gemm, 0.9), 1.0);
  ASSERT_NE(u.residuals(Tier::CrossGen, KernelClass::Gemm), nullptr);
  EXPECT_EQ(u.residuals(Tier::CrossGen, KernelClass::Gemm)->rows, 10u);
}

TEST(KernelUncertainty, ErrorsNameFileLineAndKey) {
  const std::string bad_class = write_temp("ks_unc_class.yaml",
                                           "probabilities: [0.1, 0.9]\n"
                                           "tiers:\n"
                                           "  target:\n"
                                           "    gemms: {rows: 1, log_ratio: [0, 1]}\n");
  const std::string e1 = error_of(bad_class);
  EXPECT_NE(e1.find(bad_class + ":4"), std::string::npos) << e1;
  EXPECT_NE(e1.find("tiers.target.gemms"), std::string::npos) << e1;
  EXPECT_NE(e1.find("unknown kernel class"), std::string::npos) << e1;

  const std::string wrong_count = write_temp("ks_unc_count.yaml",
                                             "probabilities: [0.1, 0.5, 0.9]\n"
                                             "tiers:\n"
                                             "  target:\n"
                                             "    gemm: {rows: 1, log_ratio: [0, 1]}\n");
  const std::string e2 = error_of(wrong_count);
  EXPECT_NE(e2.find("tiers.target.gemm.log_ratio"), std::string::npos) << e2;
  EXPECT_NE(e2.find("expected 3 values"), std::string::npos) << e2;

  const std::string descending = write_temp("ks_unc_desc.yaml", "probabilities: [0.9, 0.1]\ntiers: {}\n");
  EXPECT_NE(error_of(descending).find("non-decreasing"), std::string::npos) << error_of(descending);
  EXPECT_NE(error_of("/nonexistent/u.yaml").find("cannot read"), std::string::npos);
}

TEST(KernelUncertainty, ClassScalesParseAndReject) {
  const auto s = parse_class_scales("gemm=1.5,attention_decode=0.5");
  EXPECT_EQ(s[static_cast<std::size_t>(KernelClass::Gemm)], 1.5);
  EXPECT_EQ(s[static_cast<std::size_t>(KernelClass::AttentionDecode)], 0.5);
  EXPECT_EQ(s[static_cast<std::size_t>(KernelClass::Norm)], 1.0);
  EXPECT_EQ(parse_class_scales(format_class_scales(s)), s);
  EXPECT_EQ(format_class_scales(parse_class_scales("")), "");
  EXPECT_THROW(parse_class_scales("gemm"), std::invalid_argument);
  EXPECT_THROW(parse_class_scales("gemm=-1"), std::invalid_argument);
  EXPECT_THROW(parse_class_scales("gemm=fast"), std::invalid_argument);
  try {
    parse_class_scales("matmul=2");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kernel class 'matmul'"), std::string::npos);
  }
}

TEST(KernelUncertainty, TimeScalesMultiplyOnlyTheirClass) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  KernelCostModel plain(Tier::Roofline, h100, nullptr, 2e-6);
  KernelCostModel scaled(Tier::Roofline, h100, nullptr, 2e-6);
  scaled.set_time_scales(parse_class_scales("gemm=1.5"));
  const Kernel gemm = make_gemm("qkv_proj", 4096, 6144, 4096, DType::BF16, 2, 2);
  const Kernel norm = make_rms_norm("norm", 4096, 4096, DType::BF16);
  const KernelCost a = plain.cost(gemm), b = scaled.cost(gemm);
  EXPECT_DOUBLE_EQ(b.seconds, 1.5 * a.seconds);
  EXPECT_DOUBLE_EQ(b.compute_seconds, 1.5 * a.compute_seconds);
  EXPECT_EQ(b.bound, a.bound);
  EXPECT_DOUBLE_EQ(scaled.cost(norm).seconds, plain.cost(norm).seconds);
  // The memo does not keep a cost priced before the scales changed.
  scaled.set_time_scales(parse_class_scales(""));
  EXPECT_DOUBLE_EQ(scaled.cost(gemm).seconds, a.seconds);
}

TEST(KernelUncertainty, ShippedBandsWidenOutwardsAndHoldTheMatmulPredictions) {
  const KernelUncertainty& u = KernelUncertainty::shipped();
  for (Tier tier : {Tier::Roofline, Tier::CrossGen, Tier::Target}) {
    for (std::size_t c = 0; c < kNumKernelClasses; ++c) {
      const auto cls = static_cast<KernelClass>(c);
      const ClassResiduals* r = u.residuals(tier, cls);
      ASSERT_NE(r, nullptr) << tier_name(tier) << " " << class_name(cls);
      EXPECT_GT(r->rows, 1000u) << tier_name(tier) << " " << class_name(cls);
      EXPECT_LT(u.ratio_quantile(tier, cls, 0.05), u.ratio_quantile(tier, cls, 0.5));
      EXPECT_LT(u.ratio_quantile(tier, cls, 0.5), u.ratio_quantile(tier, cls, 0.95));
    }
  }
  // The learned tiers' GEMM and attention errors centre on their predictions (the roofline's do
  // not: real kernels are slower than the bound). Elementwise classes may not: the cross-gen
  // residuals there come from Ampere alone, predicted without any elementwise measurement.
  for (Tier tier : {Tier::CrossGen, Tier::Target})
    for (KernelClass cls : {KernelClass::Gemm, KernelClass::AttentionPrefill, KernelClass::AttentionDecode}) {
      EXPECT_LT(u.ratio_quantile(tier, cls, 0.05), 1.0) << tier_name(tier) << " " << class_name(cls);
      EXPECT_GT(u.ratio_quantile(tier, cls, 0.95), 1.0) << tier_name(tier) << " " << class_name(cls);
    }
  EXPECT_GT(u.ratio_quantile(Tier::Roofline, KernelClass::Gemm, 0.05), 1.0);
}
