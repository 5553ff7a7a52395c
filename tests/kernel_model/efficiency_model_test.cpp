#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <array>
#include <cmath>
#include <sstream>

#include "kernels/spec_error.hpp"
#include "kernels/efficiency_fit.hpp"
#include "kernels/efficiency_model.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "kernels/tiers.hpp"

using namespace ks::kernels;

namespace {

// A ground-truth GEMM model: efficiencies that fall for small M, a 6 us floor.
EfficiencyModel truth() {
  EfficiencyModel m;
  ClassParams& p = m.params(KernelClass::Gemm);
  // eta_c = sigmoid(1.5 - 2 / (1 + waves of 128x128 output tiles over the SMs)): low while the
  // output tiles do not fill the GPU.
  p.wc = {1.5, -2.0, 0, 0, 0, 0, 0, 0};
  p.wm = {0.5, 0, 0, 0, 0, 0, 0, 0};
  p.log_t0 = std::log(6e-6);
  p.log_p_minus_1 = std::log(3.0);
  return m;
}

std::vector<Measurement> synthetic(const EfficiencyModel& model, const std::string& gpu_name) {
  const GpuSpec& gpu = *find_builtin_gpu(gpu_name);
  std::vector<Measurement> rows;
  for (std::int64_t m = 1; m <= 8192; m *= 2)
    for (std::int64_t n : {1024, 4096, 14336})
      for (std::int64_t k : {2048, 8192}) {
        Measurement x;
        x.gpu = gpu_name;
        x.source = "synthetic";
        x.kernel = make_gemm("gemm", m, n, k, DType::FP16, 2, 2);
        x.seconds = model.cost(x.kernel, gpu).seconds;
        rows.push_back(x);
      }
  return rows;
}

// The model of truth() with one tree as its decode residual.
EfficiencyModel with_decode_tree(const std::string& tree) {
  EfficiencyModel m = truth();
  m.params(KernelClass::AttentionDecode).residual = BoostedTrees::parse(
      YAML::Load("{dims: " + std::to_string(KernelFeatures::kResidualDims) + ", base: 0, trees: [" + tree + "]}"));
  return m;
}

// The residual features of a kernel on an H100 (132 SMs), as the decode tests read them.
std::array<double, KernelFeatures::kResidualDims> h100_residual_features(const Kernel& k) {
  return kernel_features(k, *find_builtin_gpu("h100_sxm"), 0.0).xr;
}

}  // namespace

// Fitted on two GPUs, the model recovers the truth on a third one it never saw: the parameters
// are GPU-relative, which is what makes the cross-generation tier possible.
TEST(EfficiencyFit, RecoversAKnownModelAndTransfersToAnUnseenGpu) {
  const EfficiencyModel t = truth();
  auto rows = synthetic(t, "a100_sxm_80gb");
  const auto more = synthetic(t, "a40");
  rows.insert(rows.end(), more.begin(), more.end());
  FitOptions options;
  options.ridge = 1e-6;  // exact data: nothing to regularise towards
  const EfficiencyModel fitted = fit_efficiency(rows, options);
  EXPECT_TRUE(fitted.params(KernelClass::Gemm).fitted);
  EXPECT_EQ(fitted.trained_on, (std::vector<std::string>{"a100_sxm_80gb", "a40"}));
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  double worst = 0;
  for (const auto& r : synthetic(t, "h100_sxm")) {
    const double want = t.cost(r.kernel, h100).seconds;
    worst = std::max(worst, std::fabs(fitted.cost(r.kernel, h100).seconds - want) / want);
  }
  EXPECT_LT(worst, 0.02);
}

TEST(EfficiencyModel, YamlRoundTripIsExact) {
  EfficiencyModel t = truth();
  auto& selection = t.params(KernelClass::Gemm).residual_selection;  // the calibration's record
  selection.folds = 5;
  selection.families = 32;
  selection.cv_mape = 5.25;
  selection.options.depth = 4;
  selection.options.learning_rate = 0.4;
  selection.options.trees = 75;
  const EfficiencyModel again = EfficiencyModel::from_yaml(t.to_yaml(), "t.yaml");
  const GpuSpec& gpu = *find_builtin_gpu("a40");
  const Kernel k = make_gemm("gemm", 300, 4096, 4096, DType::FP16, 2, 2);
  EXPECT_DOUBLE_EQ(again.cost(k, gpu).seconds, t.cost(k, gpu).seconds);
  EXPECT_EQ(again.to_yaml(), t.to_yaml());
  EXPECT_EQ(again.params(KernelClass::Gemm).residual_selection.options.trees, 75);
  EXPECT_THROW(EfficiencyModel::from_yaml("foo: 1", "bad.yaml"), SpecError);
  EXPECT_THROW(EfficiencyModel::from_yaml("kernel_efficiency_model: 1\nclasses: {gemm: {t0_us: -1}}", "b.yaml"),
               SpecError);
}

// Beyond the largest work the residual was fitted on, it fades linearly over the recorded octaves;
// a file without a fade (from before it existed) extrapolates the residual flat, as it did.
TEST(EfficiencyModel, ResidualFadesBeyondTheFittedWork) {
  const EfficiencyModel plain = truth();
  EfficiencyModel t = truth();
  ClassParams& p = t.params(KernelClass::Gemm);
  // A residual of +0.2 everywhere: one tree of depth 1 whose leaves agree.
  p.residual = BoostedTrees::parse(YAML::Load("{dims: " + std::to_string(KernelFeatures::kResidualDims) +
                                              ", base: 0, trees: [{features: [0], thresholds: [100.0], "
                                              "leaves: [0.2, 0.2]}]}"));
  p.residual_fade.max_log2_work = 10;  // M = 1024
  p.residual_fade.octaves = 2;
  p.residual_fade.probe_rows = 100;
  const GpuSpec& gpu = *find_builtin_gpu("a100_sxm_80gb");
  auto ratio = [&](const EfficiencyModel& m, std::int64_t tokens) {
    const Kernel k = make_gemm("gemm", tokens, 4096, 4096, DType::FP16, 2, 2);
    return m.cost(k, gpu).seconds / plain.cost(k, gpu).seconds;
  };
  EXPECT_NEAR(ratio(t, 512), std::exp(0.2), 1e-12);
  EXPECT_NEAR(ratio(t, 1024), std::exp(0.2), 1e-12);
  EXPECT_NEAR(ratio(t, 2048), std::exp(0.1), 1e-12);
  EXPECT_NEAR(ratio(t, 4096), 1.0, 1e-12);
  EXPECT_NEAR(ratio(t, 32768), 1.0, 1e-12);
  const std::string text = t.to_yaml();
  const EfficiencyModel again = EfficiencyModel::from_yaml(text, "t.yaml");
  EXPECT_EQ(again.to_yaml(), text);
  EXPECT_NEAR(ratio(again, 2048), std::exp(0.1), 1e-12);
  // The same file without its residual_fade line: flat.
  std::string old;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find("residual_fade") == std::string::npos) old += line + "\n";
  ASSERT_NE(old, text);
  EXPECT_NEAR(ratio(EfficiencyModel::from_yaml(old, "old.yaml"), 32768), std::exp(0.2), 1e-12);
  // A damaged fade is a user error naming the key.
  std::string bad = text;
  bad.replace(bad.find("octaves: 2"), 10, "octaves: -1");
  try {
    EfficiencyModel::from_yaml(bad, "bad.yaml");
    FAIL() << "accepted a negative fade";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("gemm.residual_fade"), std::string::npos) << e.what();
  }
}

// GEMMs of one shape in different dtypes run different kernels (tiles, scale handling): the
// residual's last feature is the dtype's tensor rate over 16-bit, log2 of the spec sheet's peak
// ratio, so a tree can correct them apart. Calibration files fitted before it was appended (one
// feature fewer) still load and price as they did.
TEST(EfficiencyModel, ResidualTellsGemmDtypesApart) {
  const EfficiencyModel plain = truth();
  EfficiencyModel t = truth();
  const std::size_t dtype_feature = KernelFeatures::kResidualDims - 1;
  t.params(KernelClass::Gemm).residual =
      BoostedTrees::parse(YAML::Load("{dims: " + std::to_string(KernelFeatures::kResidualDims) +
                                     ", base: 0, trees: [{features: [" + std::to_string(dtype_feature) +
                                     "], thresholds: [0.5], leaves: [0.0, 0.3]}]}"));
  const GpuSpec& b200 = *find_builtin_gpu("b200");
  const Kernel bf16 = make_gemm("g", 512, 8192, 8192, DType::BF16, 2, 2);
  const Kernel fp8 = make_gemm("g", 512, 8192, 8192, DType::FP8, 2, 1);
  const Kernel fp4 = make_gemm("g", 512, 8192, 8192, DType::FP4, 2, 0.5625);
  EXPECT_DOUBLE_EQ(kernel_features(bf16, b200, 0.0).xr[dtype_feature], 0.0);
  EXPECT_NEAR(kernel_features(fp8, b200, 0.0).xr[dtype_feature], 1.0, 1e-9);  // 4.5 / 2.25 PFLOP/s
  EXPECT_NEAR(kernel_features(fp4, b200, 0.0).xr[dtype_feature], 2.0, 1e-9);  // 9 / 2.25 PFLOP/s
  // The parametric narrow-dtype term is held at fp8's for fp4 (an engine's quantise-and-scale work
  // of the same kind), while the fp4 peak still sets its compute time.
  EXPECT_NEAR(kernel_features(fp4, b200, 0.0).narrow, kernel_features(fp8, b200, 0.0).narrow, 1e-12);
  EXPECT_NEAR(kernel_features(fp4, b200, 0.0).t_compute * 2.0, kernel_features(fp8, b200, 0.0).t_compute, 1e-15);
  EXPECT_DOUBLE_EQ(t.cost(bf16, b200).seconds, plain.cost(bf16, b200).seconds);
  EXPECT_NEAR(t.cost(fp8, b200).seconds / plain.cost(fp8, b200).seconds, std::exp(0.3), 1e-12);
  EXPECT_NEAR(t.cost(fp4, b200).seconds / plain.cost(fp4, b200).seconds, std::exp(0.3), 1e-12);

  const auto with_dims = [&](std::size_t dims) {
    EfficiencyModel m = truth();
    m.params(KernelClass::Gemm).residual = BoostedTrees::parse(YAML::Load(
        "{dims: " + std::to_string(dims) + ", base: 0, trees: [{features: [0], thresholds: [100.0], leaves: [0.2, 0.2]}]}"));
    return m.to_yaml();
  };
  const EfficiencyModel old = EfficiencyModel::from_yaml(with_dims(dtype_feature), "old.yaml");
  EXPECT_NEAR(old.cost(fp8, b200).seconds / plain.cost(fp8, b200).seconds, std::exp(0.2), 1e-12);
  try {
    EfficiencyModel::from_yaml(with_dims(dtype_feature - 1), "bad.yaml");
    FAIL() << "accepted residual trees of too few features";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml: gemm: residual trees have 36 features, expected 38"), std::string::npos)
        << e.what();
  }
}

// Decode kernels of one KV size differ by how the engine packs a grouped-query group: the decode
// residual sees the group (log2 query heads per KV head) and the (sequence, KV head) and (sequence,
// query head) CTAs per SM, so a tree can correct an MMHA-style kernel apart from a grouped one.
// Trees fitted before these features existed never split on them: they price as they did.
TEST(EfficiencyModel, DecodeResidualSeesTheQueryGroup) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");  // 132 SMs
  // Llama-3-70B at TP 1 (64 query heads, 8 KV heads) against its MHA twin; 264 sequences of 16
  // keys (the GQA kernel's 17 MB fit in L2, so no roofline bound stops the correction below).
  const Kernel gqa = make_attention_decode("attention_decode", 264, 264 * 16, 64, 8, 128, DType::BF16, DType::BF16);
  const Kernel mha = make_attention_decode("attention_decode", 264, 264 * 16, 64, 64, 128, DType::BF16, DType::BF16);
  EXPECT_EQ(gqa.kv_heads, 8);
  const auto& xr = h100_residual_features;
  EXPECT_NEAR(xr(gqa)[12], 3.0, 1e-12);                // 64 / 8 = 2^3
  EXPECT_NEAR(xr(gqa)[13], std::log2(16.0), 1e-12);    // 264 x 8 CTAs over 132 SMs
  EXPECT_NEAR(xr(gqa)[14], std::log2(128.0), 1e-12);   // 264 x 64
  EXPECT_NEAR(xr(mha)[12], 0.0, 1e-12);
  EXPECT_NEAR(xr(mha)[13], std::log2(128.0), 1e-12);
  // Prefill attention's features stop at the byte waves.
  const Kernel prefill =
      make_attention_prefill("attention_prefill", 4, 4096, 4096, 4 * 1024 * 1025 / 2 * 4, 64, 8, 128, DType::BF16, DType::BF16);
  EXPECT_DOUBLE_EQ(kernel_features(prefill, h100, 0.0).xr[12], 0.0);

  const EfficiencyModel plain = truth();
  const EfficiencyModel t = with_decode_tree("{features: [12], thresholds: [1.5], leaves: [0.0, -0.4]}");
  EXPECT_DOUBLE_EQ(t.cost(mha, h100).seconds, plain.cost(mha, h100).seconds);
  EXPECT_NEAR(t.cost(gqa, h100).seconds / plain.cost(gqa, h100).seconds, std::exp(-0.4), 1e-12);
}

// An fp8 KV cache is read by other kernels than a bf16 one (dequantising in the loop): the decode
// residual sees the cache's bytes per element, recovered from the kernel's bytes, and a tree can
// correct one apart from the other. Kernels without KV heads (MLA) read as their activation dtype.
TEST(EfficiencyModel, DecodeResidualSeesTheKvElementSize) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const auto& xr = h100_residual_features;
  const Kernel bf16 = make_attention_decode("attention_decode", 48, 48 * 3000, 32, 8, 128, DType::BF16, DType::BF16);
  const Kernel fp8 = make_attention_decode("attention_decode", 48, 48 * 3000, 32, 8, 128, DType::BF16, DType::FP8);
  const Kernel fp32 = make_attention_decode("attention_decode", 7, 7 * 100, 40, 40, 64, DType::FP16, DType::FP32);
  EXPECT_NEAR(xr(bf16)[15], 1.0, 1e-9);   // 2 bytes
  EXPECT_NEAR(xr(fp8)[15], 0.0, 1e-9);    // 1 byte
  EXPECT_NEAR(xr(fp32)[15], 2.0, 1e-9);   // 4 bytes, under an fp16 query
  // Speculative verification's kernels count their bytes the same way.
  const Kernel verify = make_attention_verify("attention_verify", 4, 16, 4 * 900, 16 * 900, 32, 8, 128, DType::BF16,
                                              DType::FP8);
  EXPECT_NEAR(xr(verify)[15], 0.0, 1e-9);
  const Kernel mla = make_mla_attention_decode("mla_decode", 8, 8, 8 * 1024, 8 * 1024, 16, 576, 512, DType::BF16,
                                               DType::FP8);
  EXPECT_NEAR(xr(mla)[15], 1.0, 1e-9);

  const EfficiencyModel plain = truth();
  const EfficiencyModel t = with_decode_tree("{features: [15], thresholds: [0.5], leaves: [0.3, 0.0]}");
  EXPECT_DOUBLE_EQ(t.cost(bf16, h100).seconds, plain.cost(bf16, h100).seconds);
  EXPECT_NEAR(t.cost(fp8, h100).seconds / plain.cost(fp8, h100).seconds, std::exp(0.3), 1e-12);
}

// Whether a decode kernel splits a sequence's keys over CTAs, and how much one CTA streams, follow
// the keys of one sequence, not the batch's total: the decode residual sees the keys per sequence
// and the KV bytes of one (sequence, KV head), so a tree can tell a few long sequences from many
// short ones of the same total keys and bytes.
TEST(EfficiencyModel, DecodeResidualSeesTheKeysOfOneSequence) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const auto& xr = h100_residual_features;
  // 4,224 keys either way, 64 query heads on 8 KV heads of 128: 17 MB of KV, within L2.
  const Kernel many_short = make_attention_decode("attention_decode", 264, 264 * 16, 64, 8, 128, DType::BF16, DType::BF16);
  const Kernel few_long = make_attention_decode("attention_decode", 4, 4 * 1056, 64, 8, 128, DType::BF16, DType::BF16);
  const Kernel few_long_fp8 = make_attention_decode("attention_decode", 4, 4 * 1056, 64, 8, 128, DType::BF16, DType::FP8);
  EXPECT_NEAR(xr(many_short)[16], 4.0, 1e-9);                            // 16 keys
  EXPECT_NEAR(xr(few_long)[16], std::log2(1056.0), 1e-9);                 // 1,056 keys
  EXPECT_NEAR(xr(many_short)[17], std::log2(16.0 * 128 * 2 * 2), 1e-9);   // K and V of 128 in bf16: 8 KiB
  EXPECT_NEAR(xr(few_long)[17], std::log2(1056.0 * 128 * 2 * 2), 1e-9);
  EXPECT_NEAR(xr(few_long_fp8)[17], std::log2(1056.0 * 128 * 2 * 1), 1e-9);  // fp8 KV: half the bytes
  // The totals the residual saw before do not tell the two apart.
  EXPECT_DOUBLE_EQ(xr(many_short)[1], xr(few_long)[1]);
  // Prefill attention's features stop before these.
  const Kernel prefill =
      make_attention_prefill("attention_prefill", 4, 4096, 4096, 4 * 1024 * 1025 / 2 * 4, 64, 8, 128, DType::BF16, DType::BF16);
  EXPECT_DOUBLE_EQ(xr(prefill)[16], 0.0);
  EXPECT_DOUBLE_EQ(xr(prefill)[17], 0.0);

  const EfficiencyModel plain = truth();
  const EfficiencyModel t = with_decode_tree("{features: [16], thresholds: [8.0], leaves: [0.0, -0.4]}");
  EXPECT_DOUBLE_EQ(t.cost(many_short, h100).seconds, plain.cost(many_short, h100).seconds);
  EXPECT_NEAR(t.cost(few_long, h100).seconds / plain.cost(few_long, h100).seconds, std::exp(-0.4), 1e-12);
}

// A learned correction cannot price work faster than the GPU can do it: a kernel whose bytes exceed
// L2 takes at least bytes / HBM bandwidth (plus its launch share), one that fits in L2 may beat it
// (its bytes can come from L2), and none beats the peak FLOP/s.
TEST(EfficiencyModel, CorrectionStopsAtTheRoofline) {
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");  // 3.35 TB/s, 50 MB L2
  EfficiencyModel fast = truth();
  fast.params(KernelClass::AttentionDecode).residual =
      BoostedTrees::parse(YAML::Load("{dims: " + std::to_string(KernelFeatures::kResidualDims) +
                                     ", base: 0, trees: [{features: [0], thresholds: [100.0], leaves: [-3.0, -3.0]}]}"));
  // "20x faster than the parametric model", for every kernel
  // 512 sequences of 2,048 keys, 8 KV heads of 128: 4.3 GB of KV, far beyond L2.
  const Kernel big = make_attention_decode("attention_decode", 512, 512 * 2048, 64, 8, 128, DType::BF16, DType::BF16);
  ASSERT_GT(big.bytes, h100.l2_bytes);
  const KernelCost c = fast.cost(big, h100);
  EXPECT_NEAR(c.seconds - c.launch_seconds, big.bytes / 3.35e12, 1e-12);
  EXPECT_NEAR(c.efficiency, 1.0, 1e-9);
  // 2 sequences of 1,024 keys: 8.4 MB, within L2: the correction stands (20x under the parametric price).
  const Kernel small = make_attention_decode("attention_decode", 2, 2 * 1024, 64, 8, 128, DType::BF16, DType::BF16);
  ASSERT_LT(small.bytes, h100.l2_bytes);
  EXPECT_NEAR(fast.cost(small, h100).seconds / truth().cost(small, h100).seconds, std::exp(-3.0), 1e-12);
}

TEST(EfficiencyModel, ReportsBoundAndEfficiency) {
  const EfficiencyModel t = truth();
  const GpuSpec& gpu = *find_builtin_gpu("a100_sxm_80gb");
  const KernelCost big = t.cost(make_gemm("gemm", 8192, 8192, 8192, DType::FP16, 2, 2), gpu);
  EXPECT_EQ(big.bound, Bound::Compute);
  EXPECT_GT(big.efficiency, 0.5);
  EXPECT_LT(big.efficiency, 1.0);
  const KernelCost tiny = t.cost(make_gemm("gemm", 1, 64, 64, DType::FP16, 2, 2), gpu);
  EXPECT_EQ(tiny.bound, Bound::Launch);
  EXPECT_GT(tiny.seconds, 6e-6);
}

// A class remembers exp() of its parameters and its last sigmoids by value: parameters changed
// after a prediction (as fitting does) price exactly like a model built with them.
TEST(EfficiencyModel, ParametersChangedAfterAPredictionPriceLikeAFreshModel) {
  const GpuSpec& gpu = *find_builtin_gpu("a100_sxm_80gb");
  const Kernel k = make_gemm("gemm", 64, 4096, 4096, DType::FP16, 2, 2);
  EfficiencyModel changed = truth();
  const KernelCost before = changed.cost(k, gpu);
  auto change = [](ClassParams& p) {
    p.wc = {0.7, -1.0, 0, 0, 0, 0, 0, 0};
    p.wm = {1.1, 0, 0, 0, 0, 0, 0, 0};
    p.log_t0 = std::log(4e-6);
    p.log_p_minus_1 = std::log(5.0);
    p.log_theta = std::log(2.0);
  };
  change(changed.params(KernelClass::Gemm));
  EfficiencyModel fresh = truth();
  change(fresh.params(KernelClass::Gemm));
  const KernelCost after = changed.cost(k, gpu), expected = fresh.cost(k, gpu);
  EXPECT_NE(after.seconds, before.seconds);
  EXPECT_EQ(after.seconds, expected.seconds);
  EXPECT_EQ(after.launch_seconds, expected.launch_seconds);
  EXPECT_EQ(after.efficiency, expected.efficiency);
}

TEST(KernelCostModel, MemoisesAndMatchesTheTier) {
  const GpuSpec& gpu = *find_builtin_gpu("h100_sxm");
  KernelCostModel roof(Tier::Roofline, gpu, nullptr, 2e-6);
  const Kernel k = make_gemm("gemm", 128, 4096, 4096, DType::BF16, 2, 2);
  EXPECT_DOUBLE_EQ(roof.cost(k).seconds, roofline_cost(k, gpu, 2e-6).seconds);
  roof.cost(k);
  EXPECT_EQ(roof.lookups(), 2u);
  EXPECT_EQ(roof.misses(), 1u);
  auto model = std::make_shared<const EfficiencyModel>(truth());
  KernelCostModel learned(Tier::CrossGen, gpu, model, 2e-6);
  EXPECT_DOUBLE_EQ(learned.cost(k).seconds, model->cost(k, gpu).seconds);
  EXPECT_THROW(KernelCostModel(Tier::Target, gpu, nullptr, 0), std::invalid_argument);
}

TEST(Tiers, CrossGenLeavesTheTargetOut) {
  auto rows = synthetic(truth(), "a100_sxm_80gb");
  const auto more = synthetic(truth(), "a40");
  rows.insert(rows.end(), more.begin(), more.end());
  const EfficiencyModel m = fit_cross_gen(rows, "a40");
  EXPECT_EQ(m.trained_on, (std::vector<std::string>{"a100_sxm_80gb"}));
  EXPECT_EQ(parse_tier("cross-gen"), Tier::CrossGen);
  EXPECT_FALSE(parse_tier("best").has_value());
}
