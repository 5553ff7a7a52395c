// A 16-bit GEMM whose output tiles leave SMs idle splits its K loop over more CTAs and reduces
// their partial sums in a second kernel (KernelFeatures::split_k, ClassParams::split_k_launch).
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

// A 2 us launch and 1000 cycles per step of 64 of K; the soft maximum a hard one, the SM-side
// term out of the way.
const std::string kWhole =
    "kernel_efficiency_model: 1\nclasses:\n  gemm: {fitted: true, t0_us: 2, softmax_p: 30, "
    "bytes_per_sm_cycle: 10000, cycles_per_iteration: 1000, w_compute: [1], w_memory: [1]}\n";

std::string split(std::string yaml) {
  yaml.insert(yaml.find("w_compute"), "split_k_launch: true, ");
  return yaml;
}

Kernel bf16_gemm(std::int64_t m, std::int64_t n, std::int64_t k) { return make_gemm("g", m, n, k, DType::BF16, 2, 2); }

}  // namespace

// H100 has 132 SMs. The split keeps at least 512 of K per CTA and no more CTAs than SMs.
TEST(SplitK, AFewTileGemmSplitsItsKLoopOverTheIdleSms) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  EXPECT_EQ(kernel_features(bf16_gemm(1, 32, 8192), h100).split_k, 16);    // 1 tile, 8192 / 512
  EXPECT_EQ(kernel_features(bf16_gemm(1, 768, 2048), h100).split_k, 4);    // 6 tiles, 2048 / 512
  EXPECT_EQ(kernel_features(bf16_gemm(256, 4096, 8192), h100).split_k, 2);  // 64 tiles, 132 / 64
  EXPECT_EQ(kernel_features(bf16_gemm(1, 2048, 512), h100).split_k, 1);    // K too short to split
  EXPECT_EQ(kernel_features(bf16_gemm(4096, 4096, 8192), h100).split_k, 1);  // tiles fill the SMs
  // Narrow dtypes run an engine's own kernels (no split measured), a MoE's grouped GEMM its own.
  EXPECT_EQ(kernel_features(make_gemm("g", 1, 32, 8192, DType::FP8, 2, 1), h100).split_k, 1);
  Kernel experts = bf16_gemm(1, 32, 8192);
  experts.op = OpKind::MoeGemm;
  EXPECT_EQ(kernel_features(experts, h100).split_k, 1);
}

// Split, a CTA runs 1/split of the K loop, and the reduction adds a launch.
TEST(SplitK, ASplitGemmRunsAShorterLoopAndASecondLaunch) {
  const EfficiencyModel whole = EfficiencyModel::from_yaml(kWhole, "whole.yaml");
  const EfficiencyModel splitting = EfficiencyModel::from_yaml(split(kWhole), "split.yaml");
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const Kernel router = bf16_gemm(1, 32, 8192);
  const double step = 1000.0 / h100.clock_hz;
  const KernelCost w = whole.cost(router, h100), s = splitting.cost(router, h100);
  EXPECT_NEAR(w.seconds, 2e-6 + 128 * step, 0.03 * w.seconds);
  EXPECT_NEAR(s.seconds, 2 * 2e-6 + 8 * step, 0.03 * s.seconds);
  EXPECT_NEAR(s.launch_seconds, 4e-6, 1e-9);
  // A GEMM that fills the SMs is priced alike in both forms.
  const Kernel big = bf16_gemm(4096, 4096, 8192);
  EXPECT_DOUBLE_EQ(splitting.cost(big, h100).seconds, whole.cost(big, h100).seconds);
}

TEST(SplitK, TheFormRoundTripsAndFilesWithoutItKeepTheWholeLoop) {
  const EfficiencyModel splitting = EfficiencyModel::from_yaml(split(kWhole), "split.yaml");
  EXPECT_TRUE(EfficiencyModel::from_yaml(splitting.to_yaml(), "again.yaml").params(KernelClass::Gemm).split_k_launch);
  const EfficiencyModel whole = EfficiencyModel::from_yaml(kWhole, "whole.yaml");
  EXPECT_FALSE(whole.params(KernelClass::Gemm).split_k_launch);
  EXPECT_EQ(whole.to_yaml().find("split_k_launch"), std::string::npos);
}

// Fitted with the option, the GEMM class takes the split form and recovers the cycles per step
// its rows were made with; without it, the class keeps its prior's form.
TEST(SplitK, TheFitTakesTheFormWhereAskedAndRecoversTheLoop) {
  const EfficiencyModel truth = EfficiencyModel::from_yaml(split(kWhole), "truth.yaml");
  std::vector<Measurement> rows;
  for (const char* gpu_name : {"h100_sxm", "a100_sxm_80gb"}) {
    const GpuSpec& gpu = *find_builtin_gpu(gpu_name);
    for (const std::int64_t m : {1, 64, 1024, 8192})
      for (const std::int64_t n : {32, 1024, 8192})
        for (const std::int64_t k : {256, 2048, 16384}) {
          Measurement row;
          row.gpu = gpu_name;
          row.source = "aic-vllm-bf16";
          row.kernel = bf16_gemm(m, n, k);
          row.seconds = truth.cost(row.kernel, gpu).seconds;
          rows.push_back(row);
        }
  }
  FitOptions options;
  options.ridge = 1e-6;
  options.gemm_split_k = true;
  const ClassParams fitted = fit_efficiency(rows, options).params(KernelClass::Gemm);
  EXPECT_TRUE(fitted.split_k_launch);
  EXPECT_NEAR(std::exp(fitted.log_chain_cycles), 1000.0, 100.0);
  options.gemm_split_k = false;
  EXPECT_FALSE(fit_efficiency(rows, options).params(KernelClass::Gemm).split_k_launch);
}
