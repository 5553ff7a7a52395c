#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/efficiency_model.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/roofline.hpp"
#include "kernels/shared_cost_model.hpp"

using namespace ks::kernels;

namespace {

KernelCostModel roofline_model(const GpuSpec& gpu) { return KernelCostModel(Tier::Roofline, gpu, nullptr, 2e-6); }

}  // namespace

TEST(SharedCostModel, GpusThatPriceAlikeShareOneModel) {
  GpuSpec h100 = *find_builtin_gpu("h100_sxm");
  h100.name = "shared_cost_model_test_alike";  // no other test holds a model of it
  const auto a = shared_cost_model(roofline_model(h100));
  const auto b = shared_cost_model(roofline_model(h100));
  EXPECT_EQ(a.get(), b.get());
  const Kernel k = make_gemm("gemm", 128, 4096, 4096, DType::BF16, 2, 2);
  EXPECT_DOUBLE_EQ(a->cost(k).seconds, roofline_cost(k, h100, 2e-6).seconds);
  EXPECT_DOUBLE_EQ(b->cost(k).seconds, roofline_cost(k, h100, 2e-6).seconds);
  EXPECT_EQ(a->lookups(), 2u);
  EXPECT_EQ(a->misses(), 1u) << "the second GPU finds the first one's price";
}

TEST(SharedCostModel, AnyPricingDifferenceGetsItsOwnModel) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const auto base = shared_cost_model(roofline_model(h100));
  GpuSpec faster = h100;
  faster.hbm_bandwidth *= 2;
  EXPECT_NE(shared_cost_model(roofline_model(faster)).get(), base.get()) << "what-if spec";
  EXPECT_NE(shared_cost_model(roofline_model(*find_builtin_gpu("a100_sxm_80gb"))).get(), base.get());
  EXPECT_NE(shared_cost_model(KernelCostModel(Tier::Roofline, h100, nullptr, 3e-6)).get(), base.get())
      << "launch cost";
  KernelCostModel scaled = roofline_model(h100);
  std::array<double, kNumKernelClasses> scales;
  scales.fill(1.0);
  scales[0] = 1.1;
  scaled.set_time_scales(scales);
  EXPECT_NE(shared_cost_model(std::move(scaled)).get(), base.get()) << "time scales (run --intervals)";
  KernelCostModel exact = roofline_model(h100);
  exact.set_memoise(false);
  EXPECT_NE(shared_cost_model(std::move(exact)).get(), base.get()) << "--exact";
  KernelCostModel what_if = roofline_model(h100);
  what_if.set_calibrated_gpu(*find_builtin_gpu("h200"));
  EXPECT_NE(shared_cost_model(std::move(what_if)).get(), base.get()) << "calibrated GPU";
}

// The tier and the efficiency model (by identity: calibration_store caches one per file) both
// separate models; one efficiency model object shared by two GPUs does not.
TEST(SharedCostModel, TierAndEfficiencyModelSeparateModels) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  auto model_a = std::make_shared<const EfficiencyModel>();
  auto model_b = std::make_shared<const EfficiencyModel>();  // equal content, another object
  const auto cross_a = shared_cost_model(KernelCostModel(Tier::CrossGen, h100, model_a, 2e-6));
  EXPECT_EQ(shared_cost_model(KernelCostModel(Tier::CrossGen, h100, model_a, 2e-6)).get(), cross_a.get());
  EXPECT_NE(shared_cost_model(KernelCostModel(Tier::Target, h100, model_a, 2e-6)).get(), cross_a.get()) << "tier";
  EXPECT_NE(shared_cost_model(KernelCostModel(Tier::CrossGen, h100, model_b, 2e-6)).get(), cross_a.get())
      << "another efficiency model";
  EXPECT_NE(shared_cost_model(roofline_model(h100)).get(), cross_a.get()) << "roofline";
}

TEST(SharedCostModel, AFinishedRunsModelIsNotReused) {
  GpuSpec gpu = *find_builtin_gpu("l40s");
  gpu.name = "shared_cost_model_test_gpu";  // no other test holds a model of it
  const Kernel k = make_gemm("gemm", 64, 1024, 1024, DType::BF16, 2, 2);
  {
    const auto first = shared_cost_model(roofline_model(gpu));
    first->cost(k);
    EXPECT_EQ(first->lookups(), 1u);
  }
  const auto second = shared_cost_model(roofline_model(gpu));
  EXPECT_EQ(second->lookups(), 0u);
}

// operator== must see every field: shared models are matched by it. A new field changes the
// size on this toolchain: add it to operator== and to the list below, then update the size.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(GpuSpec) == 344, "GpuSpec changed: compare the new field in operator== and test it here");
#endif
TEST(GpuSpec, EqualityComparesEveryField) {
  const GpuSpec base = *find_builtin_gpu("h100_sxm");
  EXPECT_EQ(base, GpuSpec(base));
  const std::vector<std::function<void(GpuSpec&)>> changes = {
      [](GpuSpec& g) { g.name += "x"; },
      [](GpuSpec& g) { g.peak_flops[DType::BF16] *= 2; },
      [](GpuSpec& g) { g.hbm_bandwidth *= 2; },
      [](GpuSpec& g) { g.memory_bytes *= 2; },
      [](GpuSpec& g) { g.num_sms += 1; },
      [](GpuSpec& g) { g.l2_bytes *= 2; },
      [](GpuSpec& g) { g.clock_hz *= 2; },
      [](GpuSpec& g) { g.nvlink_bandwidth *= 2; },
      [](GpuSpec& g) { g.pcie_bandwidth *= 2; },
      [](GpuSpec& g) { g.vendor += "x"; },
      [](GpuSpec& g) { g.generation += "x"; },
      [](GpuSpec& g) { g.scale_up += "x"; },
      [](GpuSpec& g) { g.description += "x"; },
      [](GpuSpec& g) { g.source += "x"; },
      [](GpuSpec& g) { g.sources["hbm_bandwidth"] = "override"; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    GpuSpec changed = base;
    changes[i](changed);
    EXPECT_NE(changed, base) << "change " << i;
  }
}

// Decode attention (whose summed context makes nearly every key new) has a slot of its own: it
// neither evicts the shapes that repeat nor loses the ranks of a TP group asking for it in turn.
TEST(KernelCostModelMemo, DecodeAttentionKeepsToItsOwnSlot) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  KernelCostModel model = roofline_model(h100);
  const Kernel gemm = make_gemm("gemm", 64, 4096, 4096, DType::BF16, 2, 2);
  model.cost(gemm);
  for (std::int64_t context = 1000; context < 1000 + 20000; ++context) {
    const Kernel decode = make_attention_decode("attn", 8, context, 32, 8, 128, DType::BF16, DType::BF16);
    EXPECT_DOUBLE_EQ(model.cost(decode).seconds, roofline_cost(decode, h100, 2e-6).seconds);
    EXPECT_DOUBLE_EQ(model.cost(decode).seconds, roofline_cost(decode, h100, 2e-6).seconds) << "a second rank";
  }
  const std::uint64_t misses = model.misses();
  EXPECT_EQ(misses, 1u + 20000u) << "each context priced once, its repeat found";
  model.cost(gemm);
  EXPECT_EQ(model.misses(), misses) << "20,000 decode shapes left the GEMM's slot alone";
}

// The memo key holds heads in 32 bits; a kernel beyond that is priced afresh, never mistaken for
// one whose heads agree in the low bits.
TEST(KernelCostModelMemo, HeadsBeyondTheKeyArePricedAfresh) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  KernelCostModel model = roofline_model(h100);
  Kernel a = make_attention_decode("attn", 8, 4096, 32, 8, 128, DType::BF16, DType::BF16);
  Kernel huge = a;
  huge.heads = a.heads + (std::int64_t{1} << 32);
  huge.bytes = a.bytes;  // same traffic: only the heads tell them apart
  model.cost(a);
  model.cost(huge);
  model.cost(huge);
  EXPECT_EQ(model.lookups(), 3u);
  EXPECT_EQ(model.misses(), 3u);
  EXPECT_DOUBLE_EQ(model.cost(huge).seconds, roofline_cost(huge, h100, 2e-6).seconds);
}
