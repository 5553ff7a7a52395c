// Kernels as the measured tables timed them: a collector that replays a decode on the same KV, or a
// GEMM over a few copies of its weights, finds them in the L2 while they fit
// (KernelFeatures::t_l2); every simulated kernel is cold. And
// the architecture feature of decode's and GEMMs' memory efficiency: a bulk asynchronous copy engine.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/efficiency_fit.hpp"
#include "kernels/efficiency_model.hpp"
#include "kernels/gpu_catalog.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/sweep.hpp"
#include "kernels/tiers.hpp"

using namespace ks::kernels;

namespace {

// A decode whose KV (keys and values of bf16, 8 KV heads of 128) takes about `bytes`.
Kernel decode_of_bytes(double bytes) {
  const std::int64_t seqs = 64;
  const std::int64_t keys = static_cast<std::int64_t>(bytes / (2.0 * 8 * 128 * 2)) / seqs * seqs;
  return make_attention_decode("d", seqs, keys, 32, 8, 128, DType::BF16, DType::BF16);
}

double body(const KernelCost& c) { return c.seconds - c.launch_seconds; }

const std::string kWarmModel =
    "kernel_efficiency_model: 1\nclasses:\n  attention_decode: {fitted: true, t0_us: 1, softmax_p: 29, "
    "bytes_per_sm_cycle: 10000, ctas_per_kv_head: true, cycles_per_warm_l2_byte: 0.1, w_compute: [10], "
    "w_memory: [0.5]}\n";

// A decode class whose replayed rows read their KV from the L2 at 0.08 SM-cycles per byte.
const std::string kDecodeWithAnL2Rate =
    "kernel_efficiency_model: 1\nclasses:\n  attention_decode: {fitted: true, t0_us: 4, softmax_p: 4, "
    "bytes_per_sm_cycle: 64, launch_per_wave: 0.1, cycles_per_iteration: 30, ctas_per_kv_head: true, "
    "cycles_per_warm_l2_byte: 0.08, w_compute: [1], w_memory: [1.5, -1]}\n";

}  // namespace

TEST(WarmL2, AReplayedDecodeWhoseKvFitsInTheL2IsReadAtTheL2RateWhereThatIsFaster) {
  const EfficiencyModel model = EfficiencyModel::from_yaml(kWarmModel, "warm.yaml");
  // L40S: 96 MB of L2 over 864 GB/s of GDDR6; 142 SMs x 2.52 GHz x 10 bytes per SM-cycle = 3.6 TB/s.
  const GpuSpec& l40s = *find_builtin_gpu("l40s");
  const Kernel in_l2 = decode_of_bytes(0.5 * l40s.l2_bytes);
  ASSERT_LT(in_l2.bytes, kWarmL2Share * l40s.l2_bytes);
  const double l2_time = in_l2.bytes * 0.1 / (l40s.num_sms * l40s.clock_hz);
  const KernelCost warm = model.cost(in_l2, l40s, nullptr, 0.0, 1);
  const KernelCost cold = model.cost(in_l2, l40s);
  EXPECT_NEAR(body(warm), l2_time, 0.02 * l2_time);
  EXPECT_GT(body(cold), 3.0 * body(warm));  // the HBM term: 864 GB/s at an efficiency under 1
  EXPECT_EQ(warm.bound, Bound::Memory);
  // Beyond the share of the L2 a replay keeps, the bytes come from the DRAM warm or cold.
  const Kernel beyond = decode_of_bytes(0.9 * l40s.l2_bytes);
  ASSERT_GT(beyond.bytes, kWarmL2Share * l40s.l2_bytes);
  EXPECT_DOUBLE_EQ(model.cost(beyond, l40s, nullptr, 0.0, 1).seconds, model.cost(beyond, l40s).seconds);
  // H100: its HBM (3.35 TB/s) is faster than 132 SMs x 1.83 GHz x 10 bytes per SM-cycle, so a warm
  // decode is priced as a cold one: the faster of the two.
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const Kernel h100_in_l2 = decode_of_bytes(0.5 * h100.l2_bytes);
  EXPECT_DOUBLE_EQ(model.cost(h100_in_l2, h100, nullptr, 0.0, 1).seconds, model.cost(h100_in_l2, h100).seconds);
  // A file without the rate (every file before it, every target file) prices warm as cold.
  std::string old = kWarmModel;
  old.erase(old.find("cycles_per_warm_l2_byte: 0.1, "), std::string("cycles_per_warm_l2_byte: 0.1, ").size());
  const EfficiencyModel before = EfficiencyModel::from_yaml(old, "old.yaml");
  EXPECT_DOUBLE_EQ(before.cost(in_l2, l40s, nullptr, 0.0, 1).seconds, before.cost(in_l2, l40s).seconds);
  // The rate survives a round trip; a negative one is an error naming the key.
  const EfficiencyModel again = EfficiencyModel::from_yaml(model.to_yaml(), "again.yaml");
  EXPECT_DOUBLE_EQ(again.cost(in_l2, l40s, nullptr, 0.0, 1).seconds, warm.seconds);
  std::string bad = kWarmModel;
  bad.replace(bad.find("0.1,"), 3, "-1");
  try {
    EfficiencyModel::from_yaml(bad, "bad.yaml");
    FAIL() << "accepted a negative cycles_per_warm_l2_byte";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("cycles_per_warm_l2_byte"), std::string::npos) << e.what();
  }
}

TEST(WarmL2, TheSourcesThatReplayAKernelAreAIConfiguratorsAndVidurs) {
  const Kernel decode = decode_of_bytes(1e6);
  EXPECT_EQ(replayed_copies("aic-vllm-bf16", decode), 1);
  EXPECT_EQ(replayed_copies("aic-trtllm-fp8", decode), 1);
  EXPECT_EQ(replayed_copies("vidur-fp16", decode), 1);
  // Our own sweeps evict the L2 before each timed kernel (microbench.py); XLA's tables time GEMMs.
  for (const char* cold : {"pytorch", "pytorch-fa2", "sarathi-fp16", "xla-bf16", ""})
    EXPECT_EQ(replayed_copies(cold, decode), 0) << cold;
  // AIConfigurator's GEMM collectors rotate copies of the weights (collector/<engine>/collect_gemm.py):
  // TensorRT-LLM 5, vLLM 6 (its NVFP4 GEMMs one), SGLang 6. Vidur times its GEMMs inside a layer's
  // forward, between other weights; prefill attention is taken cold everywhere.
  const Kernel gemm = make_gemm("g", 8, 4096, 4096, DType::BF16, 2, 2);
  const Kernel fp4 = make_gemm("g", 8, 4096, 4096, DType::FP4, 2, dtype_bytes(DType::FP4));
  EXPECT_EQ(replayed_copies("aic-trtllm-bf16", gemm), 5);
  EXPECT_EQ(replayed_copies("aic-trtllm-fp4", fp4), 5);
  EXPECT_EQ(replayed_copies("aic-vllm-bf16", gemm), 6);
  EXPECT_EQ(replayed_copies("aic-vllm-fp4", fp4), 1);
  EXPECT_EQ(replayed_copies("aic-sglang-fp8", gemm), 6);
  EXPECT_EQ(replayed_copies("vidur-fp16", gemm), 0);
  EXPECT_EQ(replayed_copies("xla-bf16", gemm), 0);
  const Kernel prefill = make_attention_prefill("p", 1, 1024, 1024, 1024 * 1025 / 2, 32, 8, 128, DType::BF16, DType::BF16);
  EXPECT_EQ(replayed_copies("aic-vllm-bf16", prefill), 0);
}

// A GEMM replayed over copies of its weights is read from the L2 when every copy and the
// activations fit in kWarmL2Share of it; the copies count, not the weights alone.
TEST(WarmL2, AReplayedGemmIsWarmOnlyWhenEveryRotatedCopyOfItsWeightsFitsInTheL2) {
  const EfficiencyModel model = EfficiencyModel::from_yaml(
      "kernel_efficiency_model: 1\nclasses:\n  gemm: {fitted: true, t0_us: 1, softmax_p: 29, "
      "bytes_per_sm_cycle: 10000, cycles_per_warm_l2_byte: 0.1, w_compute: [10], w_memory: [0.5]}\n",
      "warm_gemm.yaml");
  const GpuSpec& l40s = *find_builtin_gpu("l40s");  // 96 MB of L2: 72 MB for a replay
  // 4096 x 2048 bf16 weights: 16 MiB; four copies fit, five do not.
  const Kernel gemm = make_gemm("g", 4, 4096, 2048, DType::BF16, 2, 2);
  const double weights = 4096.0 * 2048.0 * 2.0;
  ASSERT_LT(4 * weights + (gemm.bytes - weights), kWarmL2Share * l40s.l2_bytes);
  ASSERT_GT(5 * weights, kWarmL2Share * l40s.l2_bytes);
  const double cold = model.cost(gemm, l40s).seconds;
  const KernelCost warm = model.cost(gemm, l40s, nullptr, 0.0, 4);
  const double l2_time = gemm.bytes * 0.1 / (l40s.num_sms * l40s.clock_hz);
  EXPECT_NEAR(warm.seconds - warm.launch_seconds, l2_time, 0.02 * l2_time);
  EXPECT_LT(warm.seconds, 0.5 * cold);
  EXPECT_DOUBLE_EQ(model.cost(gemm, l40s, nullptr, 0.0, 5).seconds, cold);
  EXPECT_DOUBLE_EQ(model.cost(gemm, l40s, nullptr, 0.0, 0).seconds, cold);
  // Large M: the activations alone overflow the L2, whatever the copies.
  const Kernel wide = make_gemm("g", 16384, 4096, 2048, DType::BF16, 2, 2);
  EXPECT_DOUBLE_EQ(model.cost(wide, l40s, nullptr, 0.0, 1).seconds, model.cost(wide, l40s).seconds);
}

// The cross-gen fit recovers a known L2 rate from synthetic replayed rows of two GPUs, and leaves
// it off when the rows are not taken as warm.
TEST(WarmL2, TheCrossGenFitLearnsTheL2RateFromReplayedRows) {
  const std::string yaml = kDecodeWithAnL2Rate;
  const EfficiencyModel truth = EfficiencyModel::from_yaml(yaml, "truth.yaml");
  std::vector<Measurement> rows;
  for (const char* gpu_name : {"l40s", "a100_sxm_80gb"}) {
    const GpuSpec& gpu = *find_builtin_gpu(gpu_name);
    for (std::int64_t seqs : {1, 8, 64, 512})
      for (std::int64_t ctx : {128, 1024, 8192, 65536}) {
        Measurement m;
        m.gpu = gpu_name;
        m.source = "aic-vllm-bf16";
        m.kernel = make_attention_decode("d", seqs, seqs * ctx, 32, 8, 128, DType::BF16, DType::BF16);
        m.seconds = truth.cost(m.kernel, gpu, nullptr, 0.0, 1).seconds;
        rows.push_back(m);
      }
  }
  FitOptions options;
  options.ridge = 1e-6;
  options.transferable_decode = true;
  options.warm_l2_rows = true;
  const ClassParams fitted = fit_efficiency(rows, options).params(KernelClass::AttentionDecode);
  EXPECT_NEAR(std::exp(fitted.log_warm_l2_cycles), 0.08, 0.008);
  options.warm_l2_rows = false;
  EXPECT_LE(fit_efficiency(rows, options).params(KernelClass::AttentionDecode).log_warm_l2_cycles,
            ClassParams::kNoReread);
}

// The target fit reads its GPU's replayed rows as warm too: a decode whose KV fits in the L2 was
// timed from the L2, and a serving step runs it cold. Fitted as if cold, the benchmark's L2 would
// become the GPU's efficiency and price the simulated (cold) kernel at the L2's speed.
TEST(WarmL2, TheTargetFitPricesTheSimulatedKernelColdAfterLearningFromWarmRows) {
  const std::string yaml = kDecodeWithAnL2Rate;
  const EfficiencyModel truth = EfficiencyModel::from_yaml(yaml, "truth.yaml");
  std::string cold_only = yaml;  // the prior: the truth without a warm rate
  cold_only.erase(cold_only.find("cycles_per_warm_l2_byte: 0.08, "), std::string("cycles_per_warm_l2_byte: 0.08, ").size());
  const EfficiencyModel prior = EfficiencyModel::from_yaml(cold_only, "prior.yaml");
  const GpuSpec& l40s = *find_builtin_gpu("l40s");  // 96 MB of L2 over 864 GB/s
  std::vector<Measurement> rows;
  for (const std::int64_t heads : {8, 16, 32})
    for (std::int64_t seqs : {1, 8, 64, 512})
      for (std::int64_t ctx : {128, 1024, 8192, 65536}) {
        Measurement m;
        m.gpu = "l40s";
        m.source = "aic-vllm-bf16";
        m.kernel = make_attention_decode("d", seqs, seqs * ctx, heads, 8, 128, DType::BF16, DType::BF16);
        m.seconds = truth.cost(m.kernel, l40s, nullptr, 0.0, 1).seconds;
        rows.push_back(m);
      }
  const EfficiencyModel fitted = fit_target(rows, prior);
  // 32 sequences of 256 keys: 32 MiB of KV, in the L2.
  const Kernel in_l2 = make_attention_decode("d", 32, 32 * 256, 24, 8, 128, DType::BF16, DType::BF16);
  ASSERT_LT(in_l2.bytes, kWarmL2Share * l40s.l2_bytes);
  const double cold = truth.cost(in_l2, l40s).seconds, warm = truth.cost(in_l2, l40s, nullptr, 0.0, 1).seconds;
  ASSERT_GT(cold, 2.0 * warm);
  EXPECT_NEAR(fitted.cost(in_l2, l40s).seconds / cold, 1.0, 0.1);
  EXPECT_NEAR(fitted.cost(in_l2, l40s, nullptr, 0.0, 1).seconds / warm, 1.0, 0.1);
}

TEST(BulkAsyncCopy, HopperAndBlackwellHaveItAmpereAdaAndAmdDoNot) {
  for (const char* g : {"h100_sxm", "h200", "b200"}) EXPECT_TRUE(bulk_async_copy(*find_builtin_gpu(g))) << g;
  for (const char* g : {"a100_sxm_80gb", "a40", "l40s", "mi355x"}) EXPECT_FALSE(bulk_async_copy(*find_builtin_gpu(g))) << g;
  GpuSpec unnamed = *find_builtin_gpu("h100_sxm");
  unnamed.generation.clear();  // a spec file of its own
  EXPECT_FALSE(bulk_async_copy(unnamed));
}

// A class whose memory efficiency weighs the feature (`with_weights`): the kernel is priced faster
// on Hopper than without it, exactly as before on an A100, and a spec what-if of the calibrated GPU
// keeps the feature, so twice the bandwidth still halves the kernel.
namespace {
void expect_copy_engine_feature(const std::string& base, const std::string& with_weights, const Kernel& kernel) {
  const EfficiencyModel without = EfficiencyModel::from_yaml(base + "[0.5]}\n", "a.yaml");
  const EfficiencyModel with = EfficiencyModel::from_yaml(base + with_weights + "}\n", "b.yaml");
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const GpuSpec& a100 = *find_builtin_gpu("a100_sxm_80gb");
  ASSERT_EQ(with.cost(kernel, h100).bound, Bound::Memory);
  EXPECT_LT(body(with.cost(kernel, h100)), 0.9 * body(without.cost(kernel, h100)));
  EXPECT_DOUBLE_EQ(with.cost(kernel, a100).seconds, without.cost(kernel, a100).seconds);
  GpuSpec what_if = h100;
  what_if.hbm_bandwidth *= 2;
  what_if.generation.clear();  // even a variant that lost the name prices as the calibrated GPU's design
  EXPECT_NEAR(body(with.cost(kernel, what_if, &h100)), body(with.cost(kernel, h100)) / 2,
              0.02 * body(with.cost(kernel, h100)));
}
}  // namespace

// Decode's memory efficiency reads the feature as its sixth weight.
TEST(BulkAsyncCopy, DecodesMemoryEfficiencyReadsItAndAWhatIfKeepsIt) {
  expect_copy_engine_feature(
      "kernel_efficiency_model: 1\nclasses:\n  attention_decode: {fitted: true, t0_us: 1, softmax_p: 29, "
      "bytes_per_sm_cycle: 10000, ctas_per_kv_head: true, w_compute: [10], w_memory: ",
      "[0.5, 0, 0, 0, 0, 1]", decode_of_bytes(40.0 * find_builtin_gpu("h100_sxm")->l2_bytes));
}

// The GEMM class reads it as its fifth: a weight-streaming GEMM (470 MB of weights).
TEST(BulkAsyncCopy, AGemmsMemoryEfficiencyReadsItTooAndAWhatIfKeepsIt) {
  expect_copy_engine_feature(
      "kernel_efficiency_model: 1\nclasses:\n  gemm: {fitted: true, t0_us: 1, softmax_p: 29, "
      "bytes_per_sm_cycle: 10000, w_compute: [10], w_memory: ",
      "[0.5, 0, 0, 0, 1]", make_gemm("g", 4, 28672, 8192, DType::BF16, 2, 2));
}
