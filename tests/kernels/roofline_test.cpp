#include "kernels/roofline.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/step_decomposer.hpp"

namespace ks::kernels {
namespace {

const GpuSpec& h100() { return *find_builtin_gpu("h100_sxm"); }
const GpuSpec& a100() { return *find_builtin_gpu("a100_sxm_80gb"); }

// Llama-2-7B's qkv_proj at m tokens: [m x 4096] . [4096 x 12288] in bf16.
Kernel qkv_gemm(std::int64_t m) {
  StepBatch b;
  b.prefills = {{m, 0}};
  const StepKernels s =
      decompose_step(*find_builtin_model("llama-2-7b"), b, DType::BF16, DType::BF16);
  if (std::string(s.per_layer[1].name) != "qkv_proj") throw std::runtime_error("no qkv_proj");
  return s.per_layer[1];
}

TEST(Roofline, ComputeAndMemoryTimes) {
  Kernel k{OpKind::Gemm, "g", DType::BF16, 1, 1, 1, 989.4e12, 3.35e12};
  const KernelCost c = roofline_cost(k, h100(), 0.0);
  EXPECT_DOUBLE_EQ(c.compute_seconds, 1.0);
  EXPECT_DOUBLE_EQ(c.memory_seconds, 1.0);
  EXPECT_DOUBLE_EQ(c.seconds, 1.0);
  EXPECT_DOUBLE_EQ(c.efficiency, 1.0);

  k.bytes = 2 * 3.35e12;
  const KernelCost mem = roofline_cost(k, h100(), 5e-6);
  EXPECT_DOUBLE_EQ(mem.seconds, 2.0 + 5e-6);
  EXPECT_EQ(mem.bound, Bound::Memory);
  EXPECT_EQ(bound_name(mem.bound), "memory");
}

// 4096 x 12288 weight: the roofline bound flips where
// 2MNK / peak = 2(MK + MN + NK) / bw, i.e. M* = (NK/bw) / (NK/peak - (N+K)/bw).
TEST(Roofline, GemmBoundSwitchesAtTheRidge) {
  const double n = 12288, k = 4096;
  const double peak = 989.4e12, bw = 3.35e12;
  const double m_star = (n * k / bw) / (n * k / peak - (n + k) / bw);
  ASSERT_GT(m_star, 200);  // ~ 330 for H100 bf16
  ASSERT_LT(m_star, 500);
  std::int64_t first_compute = -1;
  for (std::int64_t m = 1; m <= 4096; ++m) {
    if (roofline_cost(qkv_gemm(m), h100(), 0.0).bound == Bound::Compute) {
      first_compute = m;
      break;
    }
  }
  EXPECT_EQ(first_compute, static_cast<std::int64_t>(std::floor(m_star)) + 1);
  EXPECT_EQ(roofline_cost(qkv_gemm(1), h100(), 0.0).bound, Bound::Memory);
  EXPECT_EQ(roofline_cost(qkv_gemm(4096), h100(), 0.0).bound, Bound::Compute);
  EXPECT_NEAR(ridge_point(h100(), DType::BF16), peak / bw, 1e-9);
}

TEST(Roofline, LaunchBoundForTinyKernels) {
  const Kernel k{OpKind::Add, "add", DType::BF16, 1, 4096, 0, 4096, 3 * 4096 * 2};
  const KernelCost c = roofline_cost(k, h100(), 4e-6);
  EXPECT_EQ(c.bound, Bound::Launch);
  EXPECT_NEAR(c.seconds, 4e-6 + 3 * 4096 * 2 / 3.35e12, 1e-15);
}

TEST(Roofline, CollectivesAreNotPricedHere) {
  const Kernel ar{OpKind::AllReduce, "ar", DType::BF16, 10, 4096, 0, 0, 10 * 4096 * 2};
  const KernelCost c = roofline_cost(ar, h100(), 5e-6);
  EXPECT_EQ(c.seconds, 0.0);
  EXPECT_EQ(c.bound, Bound::Communication);
}

TEST(Roofline, Fp8GemmOnA100Throws) {
  StepBatch b;
  b.decode_contexts = {10};
  const StepKernels s =
      decompose_step(*find_builtin_model("llama-3-8b"), b, DType::FP8, DType::FP8);
  const Kernel& qkv = s.per_layer[1];
  ASSERT_EQ(std::string(qkv.name), "qkv_proj");
  EXPECT_THROW(roofline_cost(qkv, a100(), 0.0), std::invalid_argument);
  EXPECT_NO_THROW(roofline_cost(qkv, h100(), 0.0));
  // Memory-only kernels of the same step do not need an fp8 peak.
  EXPECT_NO_THROW(roofline_cost(s.pre[0], a100(), 0.0));
}

TEST(Roofline, DeratedEfficiencies) {
  Kernel k{OpKind::Gemm, "g", DType::BF16, 1, 1, 1, 312e12, 1e9};
  const KernelCost c = derated_cost(k, a100(), 0.0, Efficiency{0.5, 1.0});
  EXPECT_DOUBLE_EQ(c.compute_seconds, 2.0);
  EXPECT_DOUBLE_EQ(c.efficiency, 0.5);
  EXPECT_EQ(c.bound, Bound::Compute);
  EXPECT_THROW(derated_cost(k, a100(), 0.0, Efficiency{0.0, 1.0}), std::invalid_argument);
}

}  // namespace
}  // namespace ks::kernels
