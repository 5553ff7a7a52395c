// What-if physics: a spec change moves every kernel the way its bound says, in every tier.
// Over a grid of kernels (decode and prefill attention, elementwise, norms, small- and large-M
// GEMMs) and spec changes (HBM bandwidth and tensor peak, up and down):
//   * monotonic: more of a resource never makes a kernel slower, less never faster;
//   * never beyond the roofline ratio: 2x of a resource speeds a kernel up by at most 2x;
//   * a kernel that stays memory-bound gets close to the bandwidth ratio (its body, without the
//     latency floor, at least 1.5x faster for 2x bandwidth: the learned soft maximum, p ~ 2-4,
//     blends the next limit in before it binds, e.g. decode attention's compute term on A100);
//     a memory-bound kernel barely moves when only the FLOP/s change, and symmetrically for
//     compute-bound kernels;
//   * the bound reported after the change names a limit the change did not lift.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/calibration_store.hpp"
#include "kernels/gpu_catalog.hpp"
#include "kernels/gpu_override.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/kernel_cost_model.hpp"

using namespace ks::kernels;

namespace {

struct Case {
  const char* what;
  Kernel kernel;
};

// Llama-3-8B shapes on one GPU, bf16.
std::vector<Case> kernel_grid() {
  const DType bf = DType::BF16;
  std::vector<Case> cases;
  cases.push_back({"decode attention b256 ctx2048", make_attention_decode("attn", 256, 256 * 2048, 32, 8, 128, bf, bf)});
  cases.push_back({"decode attention b16 ctx4096", make_attention_decode("attn", 16, 16 * 4096, 32, 8, 128, bf, bf)});
  cases.push_back({"decode attention b64 ctx32768", make_attention_decode("attn", 64, 64 * 32768, 32, 8, 128, bf, bf)});
  const std::int64_t s = 8192;
  cases.push_back({"prefill attention 8k", make_attention_prefill("attn", 1, s, s, s * (s + 1) / 2, 32, 8, 128, bf, bf)});
  cases.push_back({"silu_mul 256 x 14336", make_silu_mul("act", 256, 14336, bf)});
  cases.push_back({"silu_mul 8192 x 14336", make_silu_mul("act", 8192, 14336, bf)});
  cases.push_back({"add 8192 x 4096", make_add("add", 8192, 4096, bf)});
  cases.push_back({"rmsnorm 8192 x 4096", make_rms_norm("norm", 8192, 4096, bf)});
  cases.push_back({"rmsnorm 64 x 4096", make_rms_norm("norm", 64, 4096, bf)});
  cases.push_back({"rope 8192", make_rope("rope", 8192, 32, 8, 128, bf)});
  cases.push_back({"gemm m=1 (decode)", make_gemm("gemm", 1, 14336 * 2, 4096, bf, 2, 2)});
  cases.push_back({"gemm m=16 (decode)", make_gemm("gemm", 16, 6144, 4096, bf, 2, 2)});
  cases.push_back({"gemm m=64 (decode)", make_gemm("gemm", 64, 14336 * 2, 4096, bf, 2, 2)});
  cases.push_back({"gemm m=8192 (prefill)", make_gemm("gemm", 8192, 14336 * 2, 4096, bf, 2, 2)});
  cases.push_back({"gemm m=4096 down", make_gemm("gemm", 4096, 4096, 14336, bf, 2, 2)});
  return cases;
}

struct Change {
  const char* field;
  const char* factor_text;  // for messages
  double factor;            // > 1: more of the resource
  bool memory;              // the resource is HBM bandwidth (else tensor FLOP/s)
};

GpuSpec changed(const GpuSpec& base, const Change& c) {
  GpuSpec g = base;
  if (c.memory)
    g.hbm_bandwidth *= c.factor;
  else
    g.peak_flops[DType::BF16] *= c.factor;
  g.sources[c.field] = "override";
  return g;
}

struct TierCase {
  Tier tier;
  const char* gpu;
};

double body(const KernelCost& c) { return c.seconds - c.launch_seconds; }

void check_grid(const TierCase& tc) {
  const GpuSpec& base = *find_builtin_gpu(tc.gpu);
  std::shared_ptr<const EfficiencyModel> model;
  if (tc.tier != Tier::Roofline) model = tier_model(tc.tier, tc.gpu);
  const KernelCostModel before(tc.tier, base, model, kRooflineLaunchSeconds);
  const Change changes[] = {{"hbm_bandwidth", "2x", 2.0, true},
                            {"hbm_bandwidth", "0.5x", 0.5, true},
                            {"peak_bf16", "2x", 2.0, false},
                            {"peak_bf16", "0.5x", 0.5, false}};
  for (const Change& change : changes) {
    KernelCostModel after(tc.tier, changed(base, change), model, kRooflineLaunchSeconds);
    after.set_calibrated_gpu(base);
    for (const Case& kc : kernel_grid()) {
      const KernelCost a = before.cost(kc.kernel), b = after.cost(kc.kernel);
      const std::string where = std::string(tier_name(tc.tier)) + " on " + tc.gpu + ", " + kc.what + ", " +
                                change.field + " " + change.factor_text + ": " + std::to_string(a.seconds * 1e6) +
                                " -> " + std::to_string(b.seconds * 1e6) + " us, bound " +
                                std::string(bound_name(a.bound)) + " -> " + std::string(bound_name(b.bound));
      // The speed-up of the changed resource's direction (> 1 when the kernel got faster).
      const double speedup = change.factor > 1 ? a.seconds / b.seconds : b.seconds / a.seconds;
      const double body_speedup = change.factor > 1 ? body(a) / body(b) : body(b) / body(a);
      const double ratio = change.factor > 1 ? change.factor : 1.0 / change.factor;
      EXPECT_GE(speedup, 1.0 - 1e-12) << "not monotonic: " << where;
      EXPECT_LE(speedup, ratio * (1 + 1e-9)) << "beyond the roofline ratio: " << where;
      const Bound lifted = change.memory ? Bound::Memory : Bound::Compute;
      const Bound other = change.memory ? Bound::Compute : Bound::Memory;
      if (a.bound == lifted && b.bound == lifted) {
        EXPECT_GE(body_speedup, 1.5) << "stays " << bound_name(lifted) << "-bound but does not follow: " << where;
      }
      if (a.bound == other && b.bound == other) {
        EXPECT_LE(body_speedup, 1.25) << bound_name(other) << "-bound kernel moved with the other resource: " << where;
      }
      if (change.factor > 1 && b.bound == lifted) {
        EXPECT_GE(body_speedup, 1.3) << "reported " << bound_name(lifted) << "-bound after the change: " << where;
      }
    }
  }
}

}  // namespace

TEST(WhatIfPhysics, RooflineTierFollowsItsBounds) { check_grid({Tier::Roofline, "h100_sxm"}); }

TEST(WhatIfPhysics, CrossGenTierFollowsTheBoundsOnHopper) { check_grid({Tier::CrossGen, "h100_sxm"}); }

TEST(WhatIfPhysics, CrossGenTierFollowsTheBoundsOnAmpere) { check_grid({Tier::CrossGen, "a100_sxm_80gb"}); }

TEST(WhatIfPhysics, TargetTierFollowsTheBounds) { check_grid({Tier::Target, "a100_sxm_80gb"}); }

// The roofline tier is exact: a memory-bound kernel's body halves with 2x bandwidth.
TEST(WhatIfPhysics, RooflineMemoryBoundKernelHalves) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const KernelCostModel before(Tier::Roofline, h100, nullptr, kRooflineLaunchSeconds);
  const KernelCostModel after(Tier::Roofline, changed(h100, {"hbm_bandwidth", "2x", 2.0, true}), nullptr,
                              kRooflineLaunchSeconds);
  const Kernel k = make_silu_mul("act", 8192, 14336, DType::BF16);
  // 3 x 8192 x 14336 x 2 bytes over 3.35 TB/s, then over 6.7 TB/s.
  const double bytes = 3.0 * 8192 * 14336 * 2;
  EXPECT_NEAR(body(before.cost(k)), bytes / 3.35e12, 1e-9);
  EXPECT_NEAR(body(after.cost(k)), bytes / 6.7e12, 1e-9);
}

// A learned residual is read at the calibrated spec: on the calibrated GPU itself a what-if of
// factor 1 changes nothing, and the target tier's ratio under a change equals the ratio of its
// parametric part (the residual multiplies both sides alike).
TEST(WhatIfPhysics, TargetResidualIsReadAtTheCalibratedSpec) {
  const GpuSpec& a100 = *find_builtin_gpu("a100_sxm_80gb");
  const auto target = tier_model(Tier::Target, "a100_sxm_80gb");
  const KernelCostModel plain(Tier::Target, a100, target, kRooflineLaunchSeconds);
  KernelCostModel same(Tier::Target, changed(a100, {"hbm_bandwidth", "1x", 1.0, true}), target, kRooflineLaunchSeconds);
  same.set_calibrated_gpu(a100);
  for (const Case& kc : kernel_grid()) EXPECT_DOUBLE_EQ(plain.cost(kc.kernel).seconds, same.cost(kc.kernel).seconds) << kc.what;
}

// A learned correction scales a kernel's whole time: the launch part it reports is never more
// than the time, and the work part priced at the roofline is never more than the work part
// (efficiency in (0, 1]), even where the grid-size launch term is large: a decode attention of
// ~2000 sequences of a 70B model (H200 / B200 max-throughput runs) came out with a negative
// work part and a negative roofline time in kernels.csv.
TEST(WhatIfPhysics, LaunchShareNeverExceedsTheTimeOnAnyShippedTargetCalibration) {
  const DType bf = DType::BF16;
  const std::vector<Kernel> kernels = {
      make_attention_decode("attn", 2000, 2000LL * 1500, 64, 8, 128, bf, DType::FP8),
      make_attention_decode("attn", 1800, 1800LL * 3000, 64, 8, 128, bf, bf),
      make_attention_decode("attn", 1, 128, 32, 8, 128, bf, bf),
      make_gemm("gemm", 1, 1024, 1024, bf, 2, 2),
      make_gemm("gemm", 8192, 28672, 8192, bf, 2, 2),
  };
  for (const char* gpu_name : {"h100_sxm", "h200", "b200", "l40s"}) {
    for (const char* engine : {"trtllm", "vllm", "sglang"}) {
      const GpuSpec& gpu = *find_builtin_gpu(gpu_name);
      const KernelCostModel model(Tier::Target, gpu, tier_model(Tier::Target, gpu_name, "", engine),
                                  kRooflineLaunchSeconds);
      for (const Kernel& k : kernels) {
        const KernelCost c = model.cost(k);
        SCOPED_TRACE(std::string(gpu_name) + " " + engine + " " + k.name + " sequences " +
                     std::to_string(k.batch));
        EXPECT_GT(c.seconds, 0.0);
        EXPECT_GE(c.launch_seconds, 0.0);
        EXPECT_LE(c.launch_seconds, c.seconds);
        EXPECT_GT(c.efficiency, 0.0);
        const double roofline_work = (c.seconds - c.launch_seconds) * c.efficiency;
        EXPECT_GE(roofline_work, 0.0);
        EXPECT_NEAR(roofline_work, std::max(c.compute_seconds, c.memory_seconds),
                    1e-9 * c.seconds + 1e-15);
      }
    }
  }
}

// A newer GPU is never slower than an older one on the same prefill attention unless its specs
// say so: on the cross-gen tier (each GPU priced by the model fitted without its generation), an
// H100 is not slower than an A100, a B200 not slower than an H100, and an H200 (same SMs, clock
// and tensor peak as H100, more bandwidth) within 2% of an H100 or faster. Issue 17 found an 8k
// prompt's attention slower on H100 than on A100.
TEST(WhatIfPhysics, NewerGpuIsNeverSlowerOnPrefillAttention) {
  const DType bf = DType::BF16;
  std::vector<Case> prompts;
  for (const std::int64_t s : {2048LL, 8192LL, 32768LL})
    prompts.push_back({"prefill", make_attention_prefill("attn", 1, s, s, s * (s + 1) / 2, 32, 8, 128, bf, bf)});
  prompts.push_back({"prefill b16 x 1k", make_attention_prefill("attn", 16, 16 * 1024, 16 * 1024, 16 * 1024 * 1025 / 2, 64, 8, 128, bf, bf)});
  for (const char* engine : {"", "trtllm", "vllm", "sglang"}) {
    auto seconds = [&](const char* gpu, const Kernel& k) {
      const KernelCostModel m(Tier::CrossGen, *find_builtin_gpu(gpu), tier_model(Tier::CrossGen, gpu, "", engine),
                              kRooflineLaunchSeconds);
      return m.cost(k).seconds;
    };
    for (const Case& p : prompts) {
      const std::string where = std::string(p.what) + " " + std::to_string(p.kernel.m) + " queries, engine '" + engine + "'";
      const double a100 = seconds("a100_sxm_80gb", p.kernel), h100 = seconds("h100_sxm", p.kernel),
                   h200 = seconds("h200", p.kernel), b200 = seconds("b200", p.kernel);
      EXPECT_LE(h100, a100) << where << ": H100 " << h100 * 1e6 << " us, A100 " << a100 * 1e6 << " us";
      EXPECT_LE(b200, h100) << where << ": B200 " << b200 * 1e6 << " us, H100 " << h100 * 1e6 << " us";
      EXPECT_LE(h200, 1.02 * h100) << where << ": H200 " << h200 * 1e6 << " us, H100 " << h100 * 1e6 << " us";
    }
  }
}

TEST(WhatIfPhysics, CrossGenTierFollowsTheBoundsOnBlackwell) { check_grid({Tier::CrossGen, "b200"}); }

// Attention's floor is counted in cycles in every shipped calibration, target files included: a
// decode too small to reach any roofline is launch-bound, and twice the clock makes it close to
// twice as fast on every tier (the target tier's residual is read at the calibrated spec, so only
// the floor moves). A GEMM's floor is in seconds and a clock change leaves a launch-bound GEMM
// alone.
TEST(WhatIfPhysics, AClockChangeMovesALaunchBoundAttentionOnEveryShippedCalibration) {
  const DType bf = DType::BF16;
  const Kernel tiny = make_attention_decode("attn", 1, 16, 32, 8, 128, bf, bf);
  struct Shipped {
    Tier tier;
    const char* gpu;
    const char* engine;
  };
  std::vector<Shipped> files = {{Tier::CrossGen, "h100_sxm", ""}, {Tier::CrossGen, "mi300x", ""},
                                {Tier::Target, "a100_sxm_80gb", ""}};
  for (const char* engine : {"trtllm", "vllm", "sglang"}) {
    files.push_back({Tier::CrossGen, "h100_sxm", engine});
    files.push_back({Tier::CrossGen, "b200", engine});
    for (const char* gpu : {"h100_sxm", "h200", "b200", "l40s"}) files.push_back({Tier::Target, gpu, engine});
  }
  for (const Shipped& f : files) {
    SCOPED_TRACE(std::string(f.tier == Tier::Target ? "target " : "cross-gen ") + f.gpu + " " + f.engine);
    const GpuSpec& gpu = *find_builtin_gpu(f.gpu);
    const auto model = tier_model(f.tier, f.gpu, "", f.engine);
    ASSERT_TRUE(model->params(KernelClass::AttentionDecode).floor_in_cycles);
    ASSERT_TRUE(model->params(KernelClass::AttentionPrefill).floor_in_cycles);
    EXPECT_FALSE(model->params(KernelClass::Gemm).floor_in_cycles);
    GpuSpec faster = gpu;
    faster.clock_hz *= 2;
    const KernelCostModel before(f.tier, gpu, model, kRooflineLaunchSeconds);
    KernelCostModel after(f.tier, faster, model, kRooflineLaunchSeconds);
    after.set_calibrated_gpu(gpu);
    const KernelCost b = before.cost(tiny);
    ASSERT_EQ(b.bound, Bound::Launch);
    EXPECT_NEAR(after.cost(tiny).launch_seconds / b.launch_seconds, 0.5, 1e-9);
    const double ratio = after.cost(tiny).seconds / b.seconds;
    EXPECT_LT(ratio, 0.7);
    EXPECT_GE(ratio, 0.5 - 1e-9);
    const Kernel small_gemm = make_gemm("gemm", 1, 256, 256, bf, 2, 2);
    EXPECT_DOUBLE_EQ(after.cost(small_gemm).launch_seconds, before.cost(small_gemm).launch_seconds);
  }
}
