// An engine's narrow-dtype GEMM quantises its own 16-bit input before the product
// (KernelFeatures::t_quant, ClassParams::log_quant_bytes): a pass over M x K elements at the HBM
// bandwidth, whatever N is.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/efficiency_fit.hpp"
#include "kernels/efficiency_model.hpp"
#include "kernels/gpu_catalog.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/sweep.hpp"

using namespace ks::kernels;

namespace {

// A GEMM class whose engine fp8 GEMMs spend 4 HBM bytes per input element quantising it; SM-side
// and latency terms kept out of the way, the floor 2 us.
const std::string kQuantModel =
    "kernel_efficiency_model: 1\nclasses:\n  gemm: {fitted: true, t0_us: 2, softmax_p: 29, "
    "bytes_per_sm_cycle: 10000, quant_bytes_per_input: 4, w_compute: [1], w_memory: [1]}\n";

std::string without_quant(std::string yaml) {
  const std::string key = "quant_bytes_per_input: 4, ";
  yaml.erase(yaml.find(key), key.size());
  return yaml;
}

// fp8 weights, bf16 activations: an engine's fp8 linear layer.
Kernel fp8_gemm(std::int64_t m, std::int64_t n, std::int64_t k) { return make_gemm("g", m, n, k, DType::FP8, 2, 1); }

}  // namespace

TEST(QuantisationTerm, OnlyAnEnginesNarrowGemmThatQuantisesItsOwnInputHasOne) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const Kernel fp8 = fp8_gemm(4096, 32, 8192);
  EXPECT_DOUBLE_EQ(kernel_features(fp8, h100).t_quant, 4096.0 * 8192.0 / h100.hbm_bandwidth);
  EXPECT_EQ(kernel_features(make_gemm("g", 4096, 32, 8192, DType::BF16, 2, 2), h100).t_quant, 0.0);
  // XLA's tables time the product on inputs already in fp8.
  EXPECT_EQ(kernel_features(fp8, h100, 1.0).t_quant, 0.0);
  // A block-scaled model's input arrives quantised by fp8_act_quant.
  Kernel quantised = fp8;
  quantised.quantised_input = true;
  EXPECT_EQ(kernel_features(quantised, h100).t_quant, 0.0);
  // A MoE's grouped GEMM: its layer's correction prices the quantisation (per token, not per
  // routed row).
  Kernel experts = fp8;
  experts.op = OpKind::MoeGemm;
  EXPECT_EQ(kernel_features(experts, h100).t_quant, 0.0);
  // A batched GEMM quantises every problem's input.
  EXPECT_DOUBLE_EQ(kernel_features(make_gemm("g", 64, 128, 512, DType::FP8, 2, 1, 8), h100).t_quant,
                   8 * 64.0 * 512.0 / h100.hbm_bandwidth);
}

// The pass adds bytes-per-element x M x K over the bandwidth to the body: the same for N = 32 as
// for N = 8192, and it follows the HBM bandwidth, not the FLOP/s.
TEST(QuantisationTerm, ThePassAddsItsBytesOverTheBandwidthAndMovesWithTheBandwidthOnly) {
  const EfficiencyModel with = EfficiencyModel::from_yaml(kQuantModel, "quant.yaml");
  const EfficiencyModel none = EfficiencyModel::from_yaml(without_quant(kQuantModel), "none.yaml");
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  for (const std::int64_t n : {32, 8192}) {
    const Kernel g = fp8_gemm(16384, n, 8192);
    const double pass = 4.0 * 16384.0 * 8192.0 / h100.hbm_bandwidth;  // 4 bytes per element
    EXPECT_NEAR(with.cost(g, h100).seconds - none.cost(g, h100).seconds, pass, 1e-6 * pass) << "N = " << n;
  }
  // A router's N = 32: the pass is the larger part of the time, and the kernel is memory-bound.
  const Kernel router = fp8_gemm(16384, 32, 8192);
  const KernelCost base = with.cost(router, h100);
  EXPECT_EQ(base.bound, Bound::Memory);
  GpuSpec wide_hbm = h100, more_flops = h100;
  wide_hbm.hbm_bandwidth *= 2;
  wide_hbm.sources["hbm_bandwidth"] = "override";
  more_flops.peak_flops[DType::FP8] *= 2;
  more_flops.sources["peak_fp8"] = "override";
  const double body = base.seconds - base.launch_seconds;
  const KernelCost fast_hbm = with.cost(router, wide_hbm, &h100);
  EXPECT_NEAR(fast_hbm.seconds - fast_hbm.launch_seconds, body / 2, 0.02 * body);
  const KernelCost fast_tc = with.cost(router, more_flops, &h100);
  EXPECT_NEAR(fast_tc.seconds - fast_tc.launch_seconds, body, 0.02 * body);
  // 16-bit GEMMs have no pass.
  const Kernel bf16 = make_gemm("g", 16384, 32, 8192, DType::BF16, 2, 2);
  EXPECT_DOUBLE_EQ(with.cost(bf16, h100).seconds, none.cost(bf16, h100).seconds);
}

// Fitted with the term, a class recovers the bytes per element the rows were made with; without
// it, the term stays off (and so does a file's that never had it).
TEST(QuantisationTerm, TheFitRecoversTheBytesPerElementFromNarrowRows) {
  const EfficiencyModel truth = EfficiencyModel::from_yaml(kQuantModel, "truth.yaml");
  std::vector<Measurement> rows;
  for (const char* gpu_name : {"h100_sxm", "h200"}) {
    const GpuSpec& gpu = *find_builtin_gpu(gpu_name);
    for (const std::int64_t m : {16, 256, 2048, 16384})
      for (const std::int64_t n : {32, 1024, 8192})
        for (const std::int64_t k : {1024, 8192})
          for (const bool fp8 : {true, false}) {
            Measurement row;
            row.gpu = gpu_name;
            row.source = fp8 ? "aic-vllm-fp8" : "aic-vllm-bf16";
            row.kernel = fp8 ? fp8_gemm(m, n, k) : make_gemm("g", m, n, k, DType::BF16, 2, 2);
            row.seconds = truth.cost(row.kernel, gpu).seconds;
            rows.push_back(row);
          }
  }
  FitOptions options;
  options.ridge = 1e-6;
  options.quantisation_term = true;
  EXPECT_NEAR(std::exp(fit_efficiency(rows, options).params(KernelClass::Gemm).log_quant_bytes), 4.0, 0.4);
  options.quantisation_term = false;
  EXPECT_LE(fit_efficiency(rows, options).params(KernelClass::Gemm).log_quant_bytes, ClassParams::kNoQuant);
}

// microbench.py's fp8 rows (torch._scaled_mm on fp8 inputs) paid no pass. Fitted as the target
// tier fits a GPU's own sweep (every row the engine's kernels), they leave the term off rather
// than trade it against the narrow efficiency.
TEST(QuantisationTerm, ProductOnlyRowsFitNoPassEvenWhenTheyStandForTheEnginesKernels) {
  const EfficiencyModel truth = EfficiencyModel::from_yaml(without_quant(kQuantModel), "truth.yaml");
  const GpuSpec& h200 = *find_builtin_gpu("h200");
  std::vector<Measurement> rows;
  for (const std::int64_t m : {16, 256, 2048, 16384})
    for (const std::int64_t n : {32, 1024, 8192})
      for (const std::int64_t k : {1024, 8192})
        for (const bool fp8 : {true, false}) {
          Measurement row;
          row.gpu = "h200";
          row.source = "pytorch";
          row.kernel = fp8 ? fp8_gemm(m, n, k) : make_gemm("g", m, n, k, DType::BF16, 2, 2);
          row.seconds = truth.cost(row.kernel, h200, nullptr, 1.0).seconds;
          rows.push_back(row);
        }
  FitOptions options;
  options.ridge = 1e-6;
  options.quantisation_term = true;
  options.rows_are_engine_source = true;
  const EfficiencyModel fitted = fit_efficiency(rows, options);
  EXPECT_LE(fitted.params(KernelClass::Gemm).log_quant_bytes, ClassParams::kNoQuant);
  // So the fitted model prices the router-shaped fp8 GEMM as measured, with no pass on top.
  const Kernel router = fp8_gemm(16384, 32, 8192);
  const double measured = truth.cost(router, h200, nullptr, 1.0).seconds;
  EXPECT_NEAR(fitted.cost(router, h200).seconds, measured, 0.05 * measured);
  // The same rows from an engine's table would have fitted one.
  for (Measurement& row : rows) row.source = "aic-vllm";
  for (Measurement& row : rows)
    if (row.kernel.dtype == DType::FP8) row.seconds += 4.0 * row.kernel.m * row.kernel.k / h200.hbm_bandwidth;
  EXPECT_NEAR(std::exp(fit_efficiency(rows, options).params(KernelClass::Gemm).log_quant_bytes), 4.0, 0.4);
}

TEST(QuantisationTerm, TheRateRoundTripsThroughTheCalibrationFileAndANegativeOneIsRefused) {
  const EfficiencyModel model = EfficiencyModel::from_yaml(kQuantModel, "quant.yaml");
  const EfficiencyModel again = EfficiencyModel::from_yaml(model.to_yaml(), "again.yaml");
  EXPECT_DOUBLE_EQ(std::exp(again.params(KernelClass::Gemm).log_quant_bytes), 4.0);
  std::string bad = kQuantModel;
  bad.replace(bad.find("quant_bytes_per_input: 4"), 24, "quant_bytes_per_input: -1");
  try {
    (void)EfficiencyModel::from_yaml(bad, "bad.yaml");
    FAIL() << "a negative rate was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("quant_bytes_per_input"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.yaml"), std::string::npos) << e.what();
  }
}
