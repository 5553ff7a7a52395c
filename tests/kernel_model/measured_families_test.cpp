#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/efficiency_fit.hpp"
#include "kernels/efficiency_model.hpp"
#include "kernels/gpu_catalog.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/measured_families.hpp"
#include "kernels/spec_error.hpp"

using namespace ks::kernels;

namespace {

Kernel gemm(std::int64_t m, std::int64_t n = 4096, std::int64_t k = 4096, double weight_bytes = 2) {
  return make_gemm("gemm", m, n, k, DType::FP16, 2, weight_bytes);
}

// One family measured at M = 256 (0.1 slower than the model) and 1024 (0.3 slower).
MeasuredFamilies two_points() {
  return MeasuredFamilies::build({{gemm(256), 0.1}, {gemm(1024), 0.3}, {gemm(1024), 0.3}});
}

}  // namespace

TEST(MeasuredFamilies, InterpolatesInLogMBetweenPointsAndFadesBeyondThem) {
  const MeasuredFamilies f = two_points();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f.log_deviation(gemm(256), INFINITY), 0.1);
  EXPECT_DOUBLE_EQ(f.log_deviation(gemm(1024), INFINITY), 0.3);
  EXPECT_NEAR(f.log_deviation(gemm(512), INFINITY), 0.2, 1e-12);  // halfway in log2 M
  // Beyond the measured range: the edge's value, held or fading over the given octaves.
  EXPECT_DOUBLE_EQ(f.log_deviation(gemm(8192), INFINITY), 0.3);
  EXPECT_NEAR(f.log_deviation(gemm(2048), 2.0), 0.15, 1e-12);
  EXPECT_DOUBLE_EQ(f.log_deviation(gemm(4096), 2.0), 0.0);
  EXPECT_NEAR(f.log_deviation(gemm(128), 2.0), 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(f.log_deviation(gemm(2048), 0.0), 0.0);
}

// Only the measured family: another N x K, other operand widths of the same N x K (int4 weights)
// or an op without a one-dimensional family get nothing.
TEST(MeasuredFamilies, MatchesOnlyTheMeasuredShapeAndOperandWidths) {
  const MeasuredFamilies f = two_points();
  EXPECT_EQ(f.log_deviation(gemm(512, 8192), INFINITY), 0.0);
  EXPECT_EQ(f.log_deviation(gemm(512, 4096, 4096, 0.5), INFINITY), 0.0);
  EXPECT_FALSE(has_shape_family(OpKind::AttentionDecode));
  EXPECT_TRUE(has_shape_family(OpKind::RmsNorm));
  const MeasuredFamilies norms = MeasuredFamilies::build(
      {{make_rms_norm("n", 64, 4096, DType::FP16), 0.2}, {make_rms_norm("n", 128, 4096, DType::FP16), 0.2}});
  EXPECT_DOUBLE_EQ(norms.log_deviation(make_rms_norm("n", 100, 4096, DType::FP16), INFINITY), 0.2);
  EXPECT_EQ(norms.log_deviation(make_add("a", 100, 4096, DType::FP16), INFINITY), 0.0);
  // Two operand widths under one key (bytes not affine in M): the family is left out.
  const MeasuredFamilies mixed = MeasuredFamilies::build({{gemm(256), 0.1}, {gemm(512), 0.1}, {gemm(1024, 4096, 4096, 1), 0.1}});
  EXPECT_TRUE(mixed.empty());
}

// The probe keeps points that carry structure (a staircase shared by neighbouring M) and rejects
// points that are noise.
TEST(MeasuredFamilies, SelectionKeepsStructureAndRejectsNoise) {
  std::vector<FamilyMeasurement> staircase, noise;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.08, 0.08);
  for (std::int64_t n = 1024; n <= 1024 * 12; n += 1024)
    for (std::int64_t m = 64; m <= 4096; m += 64) {
      // A step every 512 rows, as a library switching tiles would make.
      staircase.push_back({gemm(m, n), 0.05 * static_cast<double>((m / 512) % 3)});
      noise.push_back({gemm(m, n), u(rng)});
    }
  const MeasuredFamilies kept = select_measured_families(staircase);
  EXPECT_EQ(kept.size(), 12u);
  EXPECT_EQ(kept.probe_families, 12u);
  EXPECT_EQ(kept.probe_better_in, 12u);
  EXPECT_LT(kept.probe_mape, kept.model_probe_mape);
  EXPECT_EQ(kept.probe_rows, staircase.size() / 2);
  const MeasuredFamilies rejected = select_measured_families(noise);
  EXPECT_TRUE(rejected.empty());
  EXPECT_GT(rejected.probe_rows, 0u);
  EXPECT_GT(rejected.probe_mape, rejected.model_probe_mape);
  // Two families can never be a significant majority.
  std::vector<FamilyMeasurement> two(staircase.begin(), staircase.begin() + 2 * 64);
  EXPECT_TRUE(select_measured_families(two).empty());
}

// In a calibration file: exact round trip, old files without them still load, damage is an error
// naming the key.
TEST(MeasuredFamilies, CalibrationYamlRoundTripAndErrors) {
  EfficiencyModel model;
  ClassParams& p = model.params(KernelClass::Gemm);
  p.measured = two_points();
  p.measured.probe_rows = 10;
  const GpuSpec& gpu = *find_builtin_gpu("a100_sxm_80gb");
  EfficiencyModel plain;
  EXPECT_NEAR(model.cost(gemm(512), gpu).seconds / plain.cost(gemm(512), gpu).seconds, std::exp(0.2), 1e-9);
  const std::string text = model.to_yaml();
  const EfficiencyModel again = EfficiencyModel::from_yaml(text, "c.yaml");
  EXPECT_EQ(again.to_yaml(), text);
  EXPECT_DOUBLE_EQ(again.cost(gemm(512), gpu).seconds, model.cost(gemm(512), gpu).seconds);
  auto error_of = [&](const std::string& from, const std::string& to) -> std::string {
    std::string bad = text;
    const auto at = bad.find(from);
    if (at == std::string::npos) return "'" + from + "' not in the file";
    bad.replace(at, from.size(), to);
    try {
      EfficiencyModel::from_yaml(bad, "bad.yaml");
    } catch (const SpecError& e) {
      return e.what();
    }
    return "accepted";
  };
  // Lists are one scalar each; an ordinary YAML sequence (older files) reads the same.
  EXPECT_EQ(error_of("m: '256 1024'", "m: [256, 1024]"), "accepted");
  EXPECT_NE(error_of("m: '256 1024'", "m: '1024 256'").find("gemm.measured_families.families[0].m"),
            std::string::npos);
  EXPECT_NE(error_of("m: '256 1024'", "m: '256 x'").find("families[0].m[1]: 'x' is not an integer"), std::string::npos);
  EXPECT_NE(error_of("op: gemm", "op: attention_decode").find("families[0].op"), std::string::npos);
  EXPECT_NE(error_of("m: '256 1024'", "m: '256'").find("equal length"), std::string::npos);
  EXPECT_NE(error_of("m: '256 1024'", "m: [0, 1024]").find(">= 1"), std::string::npos);
}

// Calibrated on a sweep whose one family has a staircase the class model cannot represent, the
// target tier reproduces that family's measurements and leaves unmeasured families alone.
TEST(MeasuredFamilies, CalibrationReproducesAMeasuredStaircase) {
  const GpuSpec& gpu = *find_builtin_gpu("a100_sxm_80gb");
  const EfficiencyModel truth;
  auto step = [](std::int64_t m) { return 1.0 + 0.15 * static_cast<double>((m / 384) % 2); };
  std::vector<Measurement> rows;
  for (std::int64_t n : {2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576})
    for (std::int64_t m = 32; m <= 2048; m += 32) {
      Measurement x;
      x.gpu = "a100_sxm_80gb";
      x.source = "synthetic";
      x.kernel = gemm(m, n);
      x.seconds = truth.cost(x.kernel, gpu).seconds * step(m + n / 1024 * 32);
      rows.push_back(x);
    }
  FitOptions options;
  options.prior = &truth;
  options.residual_trees = true;
  options.boost.trees = 5;  // a class model too coarse for each family's steps, as across real families
  options.boost.depth = 2;
  options.measured_families = true;
  options.rows_are_engine_source = true;
  const EfficiencyModel fitted = fit_efficiency(rows, options);
  ASSERT_EQ(fitted.params(KernelClass::Gemm).measured.size(), 8u);
  double worst = 0;
  for (const Measurement& r : rows)
    worst = std::max(worst, std::fabs(fitted.cost(r.kernel, gpu).seconds / r.seconds - 1.0));
  EXPECT_LT(worst, 1e-6);  // every measured point, exactly
  // Between measured points of a family: between its neighbours' measurements.
  const double between = fitted.cost(gemm(1000, 4096), gpu).seconds;
  const double lo = truth.cost(gemm(992, 4096), gpu).seconds * step(992 + 4 * 32);
  const double hi = truth.cost(gemm(1024, 4096), gpu).seconds * step(1024 + 4 * 32);
  EXPECT_GE(between, std::min(lo, hi) * 0.999);
  EXPECT_LE(between, std::max(lo, hi) * 1.001);
  // A family the sweep never measured: the class model alone.
  EfficiencyModel model_only = fitted;
  model_only.params(KernelClass::Gemm).measured = MeasuredFamilies();
  EXPECT_EQ(fitted.cost(gemm(1000, 5120), gpu).seconds, model_only.cost(gemm(1000, 5120), gpu).seconds);
}
