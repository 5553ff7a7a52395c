// The pieces of the transfer protocol: shape-family folds, leaving a whole generation (and other
// engines' rows) out of the cross-gen fit, the calibration file a GPU and engine select, and the
// launch latency's grid-size term (AMALI: KLL = s x grid size + k), held-out sweep folders.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "base/util/data_dir.hpp"
#include "kernels/calibration_store.hpp"
#include "kernels/efficiency_fit.hpp"
#include "kernels/efficiency_model.hpp"
#include "kernels/gpu_catalog.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/kernel_shape.hpp"
#include "kernels/sweep.hpp"
#include "kernels/tiers.hpp"

using namespace ks::kernels;

namespace {

// A calibration file whose `key` holds a negative rate is an error that names the key.
void expect_negative_rate_rejected(const std::string& yaml, const std::string& key_and_value) {
  std::string bad = yaml;
  const std::string key = key_and_value.substr(0, key_and_value.find(':'));
  bad.replace(bad.find(key_and_value), key_and_value.size(), key + ": -1");
  try {
    EfficiencyModel::from_yaml(bad, "bad.yaml");
    FAIL() << "accepted a negative " << key;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

// The same calibration file without `text` (a key and its value): how files from before a term read.
std::string without(std::string yaml, const std::string& text) {
  const std::size_t at = yaml.find(text);
  EXPECT_NE(at, std::string::npos) << text;
  if (at != std::string::npos) yaml.erase(at, text.size());
  return yaml;
}

Measurement gemm_row(const std::string& gpu, const std::string& source, std::int64_t m, std::int64_t n,
                     std::int64_t k, double us) {
  Measurement x;
  x.gpu = gpu;
  x.source = source;
  x.shape.op = "gemm";
  x.shape.dtype = DType::BF16;
  x.shape.m = m;
  x.shape.n = n;
  x.shape.k = k;
  x.kernel = build_kernel(x.shape);
  x.seconds = us * 1e-6;
  return x;
}

}  // namespace

// A subfolder marked held out (the real-GPU test set) is never read for training; every other
// subfolder is (AIConfigurator's tables live in one).
TEST(LoadSweeps, SkipsFoldersMarkedHeldOut) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ks_load_sweeps_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "imported");
  fs::create_directories(dir / "measured_here");
  auto write = [](const fs::path& path, std::int64_t m) {
    std::ofstream(path) << format_sweep({gemm_row("h100_sxm", "s", m, 4096, 4096, 10)});
  };
  write(dir / "top.csv", 1);
  write(dir / "imported" / "table.csv", 2);
  write(dir / "measured_here" / "sweep.csv", 3);
  std::ofstream(dir / "measured_here" / kHeldOutMarker) << "test set\n";
  const auto rows = load_sweeps(dir.string());
  std::set<std::int64_t> ms;
  for (const Measurement& r : rows) ms.insert(r.shape.m);
  EXPECT_EQ(ms, (std::set<std::int64_t>{1, 2}));
  fs::remove_all(dir);
}

// The shipped real-GPU sweeps (data/sweeps/microbench/, PyTorch rows) are marked held out: no
// row of them reaches a cross-gen fit or a target calibration's prior.
TEST(LoadSweeps, ShippedMicrobenchSweepsAreHeldOut) {
  ASSERT_TRUE(std::filesystem::exists(data_dir() + "/sweeps/microbench/" + kHeldOutMarker));
  for (const Measurement& r : load_sweeps()) EXPECT_EQ(r.source.find("pytorch"), std::string::npos) << r.source;
}

// Every M of one N x K lands in the same fold, the same on every GPU; the folds split families.
TEST(FamilyFold, KeepsWholeFamiliesTogether) {
  std::set<std::size_t> folds_seen;
  for (std::int64_t n : {512, 1024, 3072, 4096, 5120, 6144, 8192, 12288, 14336, 28672}) {
    const auto first = family_fold(gemm_row("h100_sxm", "s", 1, n, 4096, 1).shape, 3);
    for (std::int64_t m : {2, 64, 4096}) {
      EXPECT_EQ(family_fold(gemm_row("h100_sxm", "s", m, n, 4096, 1).shape, 3), first);
      EXPECT_EQ(family_fold(gemm_row("b200", "s", m, n, 4096, 1).shape, 3), first);
    }
    EXPECT_LT(first, 3u);
    folds_seen.insert(first);
  }
  EXPECT_GT(folds_seen.size(), 1u);  // ten families do not all hash to one fold
}

// Leaving a generation out drops every one of its GPUs; an engine's fit keeps only its rows for
// the classes it measured (and every row elsewhere).
TEST(CrossGenOptions, LeavesGenerationsAndOtherEnginesOut) {
  std::vector<Measurement> rows;
  for (const char* gpu : {"a100_sxm_80gb", "h100_sxm", "h200", "b200"})
    for (const char* source : {"aic-trtllm-bf16", "aic-vllm-bf16"})
      for (std::int64_t m = 1; m <= 4096; m *= 4) rows.push_back(gemm_row(gpu, source, m, 4096, 4096, 10.0 + m * 0.01));
  CrossGenOptions hopper_out;
  hopper_out.leave_out = {"h100_sxm", "h200"};
  EXPECT_EQ(fit_cross_gen(rows, hopper_out).trained_on, (std::vector<std::string>{"a100_sxm_80gb", "b200"}));
  EXPECT_EQ(row_framework(rows.front()), "trtllm");
  Measurement vidur = rows.front();
  vidur.source = "vidur-fp16";
  EXPECT_EQ(row_framework(vidur), "");
  vidur.framework = "sglang";  // the column wins over the source name
  EXPECT_EQ(row_framework(vidur), "sglang");
}

// A GPU picks its generation's cross-gen file and its engine's target file when shipped, the
// engine-neutral one otherwise.
TEST(CalibrationStore, SelectsByGenerationAndEngine) {
  EXPECT_EQ(find_builtin_gpu("h200")->generation, "hopper");
  EXPECT_EQ(find_builtin_gpu("a40")->generation, "ampere");
  auto file = [](const std::string& path) { return path.substr(path.rfind('/') + 1); };
  EXPECT_EQ(file(tier_model_path(Tier::CrossGen, "h200", "", "vllm")), "cross_gen_without_hopper.vllm.yaml");
  EXPECT_EQ(file(tier_model_path(Tier::CrossGen, "h100_sxm", "")), "cross_gen_without_hopper.yaml");
  EXPECT_EQ(file(tier_model_path(Tier::CrossGen, "mi355x", "", "vllm")), "cross_gen_without_cdna4.yaml");
  EXPECT_EQ(file(tier_model_path(Tier::CrossGen, "mi300x", "", "trtllm")), "cross_gen.trtllm.yaml");
  EXPECT_EQ(file(tier_model_path(Tier::Target, "h100_sxm", "", "trtllm")), "target_h100_sxm.trtllm.yaml");
  EXPECT_EQ(file(tier_model_path(Tier::Target, "a100_sxm_80gb", "", "trtllm")), "target_a100_sxm_80gb.yaml");
  EXPECT_EQ(tier_model_path(Tier::Target, "h100_sxm", "mine.yaml", "vllm"), "mine.yaml");
  for (const char* engine : {"trtllm", "vllm", "sglang"})
    for (const char* gpu : {"h100_sxm", "h200", "b200", "l40s"})
      EXPECT_NO_THROW(tier_model(Tier::Target, gpu, "", engine)) << gpu << " " << engine;
}

// t0 x (1 + s x waves): 128x128 output tiles over the SMs, read from the file's launch_per_wave.
TEST(LaunchLatency, GrowsWithTheGridAsAmaliSays) {
  const std::string yaml =
      "kernel_efficiency_model: 1\nclasses:\n  gemm: {fitted: true, t0_us: 4, softmax_p: 4, bytes_per_sm_cycle: 64, "
      "launch_per_wave: 0.5, w_compute: [1], w_memory: [1]}\n";
  const EfficiencyModel with = EfficiencyModel::from_yaml(yaml, "t.yaml");
  const EfficiencyModel without_term = EfficiencyModel::from_yaml(without(yaml, "launch_per_wave: 0.5, "), "t.yaml");
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");  // 132 SMs
  // 8448 x 8192 output: 66 x 64 tiles of 128x128 = 4224 tiles = 32 waves over 132 SMs.
  const Kernel big = make_gemm("g", 8448, 8192, 4096, DType::BF16, 2, 2);
  EXPECT_NEAR(with.cost(big, h100).launch_seconds, 4e-6 * (1 + 0.5 * 32), 1e-12);
  EXPECT_NEAR(without_term.cost(big, h100).launch_seconds, 4e-6, 1e-15);
  // The body is the same; only the floor moved.
  EXPECT_NEAR(with.cost(big, h100).seconds - without_term.cost(big, h100).seconds, 4e-6 * 0.5 * 32, 1e-11);
  // Round trip keeps the term; a negative one is an error naming the key.
  EXPECT_NEAR(EfficiencyModel::from_yaml(with.to_yaml(), "again.yaml").cost(big, h100).launch_seconds,
              4e-6 * 17, 1e-12);
  expect_negative_rate_rejected(yaml, "launch_per_wave: 0.5");
}

// Attention prefill's softmax: an exponential per query-key pair (and head) on the SMs' special-
// function units, which the tensor cores do not speed up. t = pairs x cycles_per_softmax_pair /
// (SMs x clock), read from the file; it scales with SMs and clock, not with the tensor peak.
TEST(SoftmaxTerm, ScalesWithSmsAndClockNotWithTheTensorPeak) {
  const std::string yaml =
      "kernel_efficiency_model: 1\nclasses:\n  attention_prefill: {fitted: true, t0_us: 1, softmax_p: 29, "
      "bytes_per_sm_cycle: 10000, cycles_per_softmax_pair: 0.5, w_compute: [10], w_memory: [10]}\n";
  const EfficiencyModel with = EfficiencyModel::from_yaml(yaml, "t.yaml");
  const EfficiencyModel without_term = EfficiencyModel::from_yaml(without(yaml, "cycles_per_softmax_pair: 0.5, "), "t.yaml");
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");  // 132 SMs at 1.83 GHz, 989 TFLOP/s bf16
  const std::int64_t s = 8192;
  const Kernel k = make_attention_prefill("attn", 1, s, s, s * (s + 1) / 2, 32, 8, 128, DType::BF16, DType::BF16);
  const double pairs = 32.0 * static_cast<double>(s * (s + 1) / 2);
  const double softmax = pairs * 0.5 / (132 * 1.83e9);  // 4x the tensor time at this rate
  auto body = [](const KernelCost& c) { return c.seconds - c.launch_seconds; };
  const KernelCost c = with.cost(k, h100);
  EXPECT_NEAR(body(c), softmax, 0.01 * softmax);
  EXPECT_EQ(c.bound, Bound::Sm);
  // Without the key (files from before it): the tensor time alone.
  const KernelCost plain = without_term.cost(k, h100);
  EXPECT_EQ(plain.bound, Bound::Compute);
  EXPECT_LT(body(plain), 0.3 * softmax);
  // 2x tensor peak: the softmax-bound kernel barely moves; 2x SMs: it halves.
  GpuSpec faster_tc = h100, more_sms = h100;
  faster_tc.peak_flops[DType::BF16] *= 2;
  more_sms.num_sms *= 2;
  EXPECT_NEAR(body(with.cost(k, faster_tc)), body(c), 0.01 * body(c));
  EXPECT_NEAR(body(with.cost(k, more_sms)), body(c) / 2, 0.01 * body(c));
  // Round trip keeps the term; a negative one is an error naming the key.
  EXPECT_NEAR(body(EfficiencyModel::from_yaml(with.to_yaml(), "again.yaml").cost(k, h100)), body(c), 1e-12);
  expect_negative_rate_rejected(yaml, "cycles_per_softmax_pair: 0.5");
}

// Decode kernels that pack a grouped-query group into one CTA run (sequence, KV head) CTAs: with
// ctas_per_kv_head the launch's waves count those. A group beyond kMaxPackedDecodeGroup falls
// back to one CTA per query head, each re-reading its KV head's keys and values:
// t = bytes x group x cycles_per_reread_byte / (SMs x clock), SM-side work that more HBM
// bandwidth does not speed up.
TEST(DecodeGroups, PackedGroupsLaunchPerKvHeadAndLargeOnesRereadTheirKv) {
  const std::string yaml =
      "kernel_efficiency_model: 1\nclasses:\n  attention_decode: {fitted: true, t0_us: 4, softmax_p: 29, "
      "bytes_per_sm_cycle: 10000, launch_per_wave: 0.5, cycles_per_reread_byte: 0.25, ctas_per_kv_head: true, "
      "w_compute: [10], w_memory: [10]}\n";
  const EfficiencyModel with = EfficiencyModel::from_yaml(yaml, "t.yaml");
  const EfficiencyModel old =
      EfficiencyModel::from_yaml(without(yaml, "cycles_per_reread_byte: 0.25, ctas_per_kv_head: true, "), "t.yaml");
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const double sms = h100.num_sms, clock = h100.clock_hz;
  // 8 query heads per KV head: 1056 x 8 = 8448 (sequence, KV head) CTAs = 64 waves over 132 SMs,
  // 8x as many (sequence, query head) CTAs.
  const Kernel g8 = make_attention_decode("d", 1056, 1056 * 512, 64, 8, 128, DType::BF16, DType::BF16);
  ASSERT_EQ(h100.num_sms, 132);
  EXPECT_NEAR(with.cost(g8, h100).launch_seconds, 4e-6 * (1 + 0.5 * 64), 1e-12);
  EXPECT_NEAR(old.cost(g8, h100).launch_seconds, 4e-6 * (1 + 0.5 * 512), 1e-12);
  // A packed group re-reads nothing: the body is the memory time either way.
  auto body = [](const KernelCost& c) { return c.seconds - c.launch_seconds; };
  EXPECT_NEAR(body(with.cost(g8, h100)), body(old.cost(g8, h100)), 1e-3 * body(old.cost(g8, h100)));
  EXPECT_EQ(with.cost(g8, h100).bound, Bound::Memory);
  // 32 query heads per KV head: beyond the packed kernels' groups.
  const Kernel g32 = make_attention_decode("d", 256, 256 * 4096, 128, 4, 128, DType::BF16, DType::BF16);
  const double reread = g32.bytes * 32.0 * 0.25 / (sms * clock);
  const KernelCost c = with.cost(g32, h100);
  EXPECT_NEAR(body(c), reread, 0.01 * reread);
  EXPECT_EQ(c.bound, Bound::Sm);
  EXPECT_LT(body(old.cost(g32, h100)), 0.1 * reread);  // files from before it: no such term
  // 2x HBM bandwidth leaves it; 2x SMs halves it.
  GpuSpec more_bw = h100, more_sms = h100;
  more_bw.hbm_bandwidth *= 2;
  more_sms.num_sms *= 2;
  EXPECT_NEAR(body(with.cost(g32, more_bw)), body(c), 0.01 * body(c));
  EXPECT_NEAR(body(with.cost(g32, more_sms)), body(c) / 2, 0.01 * body(c));
  // A kernel without KV heads (MLA's latent decode) has no group.
  Kernel mla = g32;
  mla.kv_heads = 0;
  EXPECT_LT(body(with.cost(mla, h100)), 0.1 * reread);
  // Round trip keeps both; a negative rate is an error naming the key.
  const EfficiencyModel again = EfficiencyModel::from_yaml(with.to_yaml(), "again.yaml");
  EXPECT_NEAR(again.cost(g32, h100).seconds, c.seconds, 1e-12);
  EXPECT_NEAR(again.cost(g8, h100).launch_seconds, 4e-6 * 33, 1e-12);
  expect_negative_rate_rejected(yaml, "cycles_per_reread_byte: 0.25");
}

// The cross-gen tier's decode fit recovers a known re-read rate and packed launch from
// synthetic measurements of two GPUs, and leaves the rate off without a group too large to
// pack. A target fit keeps its prior's form: on the cross-gen model it refits the same terms
// from one GPU's rows; on a prior of the older form (query-head waves) it has no re-read term.
TEST(DecodeGroups, TheTransferableFitRecoversTheRereadRate) {
  const std::string yaml =
      "kernel_efficiency_model: 1\nclasses:\n  attention_decode: {fitted: true, t0_us: 6, softmax_p: 4, "
      "bytes_per_sm_cycle: 64, launch_per_wave: 0.1, cycles_per_iteration: 30, cycles_per_reread_byte: 0.05, "
      "ctas_per_kv_head: true, w_compute: [1], w_memory: [1.5, -1]}\n";
  const EfficiencyModel truth = EfficiencyModel::from_yaml(yaml, "truth.yaml");
  std::vector<Measurement> rows;
  for (const char* gpu_name : {"a100_sxm_80gb", "b200"}) {
    const GpuSpec& gpu = *find_builtin_gpu(gpu_name);
    for (std::int64_t seqs : {1, 8, 64, 512})
      for (std::int64_t ctx : {128, 2048, 32768})
        for (const auto& heads : std::vector<std::pair<int, int>>{{8, 8}, {32, 8}, {64, 4}, {128, 2}}) {
          Measurement m;
          m.gpu = gpu_name;
          m.source = "synthetic";
          m.kernel = make_attention_decode("d", seqs, seqs * ctx, heads.first, heads.second, 128, DType::BF16,
                                           DType::BF16);
          m.seconds = truth.cost(m.kernel, gpu).seconds;
          rows.push_back(m);
        }
  }
  FitOptions options;
  options.ridge = 1e-6;
  options.transferable_decode = true;
  const EfficiencyModel cross_gen = fit_efficiency(rows, options);
  const ClassParams& fitted = cross_gen.params(KernelClass::AttentionDecode);
  EXPECT_TRUE(fitted.ctas_per_kv_head);
  EXPECT_NEAR(std::exp(fitted.log_reread_cycles), 0.05, 0.005);
  EXPECT_NEAR(std::exp(fitted.log_launch_per_wave), 0.1, 0.02);
  // Without a group too large to pack, no row informs the re-read rate: it stays off.
  std::vector<Measurement> packed;
  for (const Measurement& m : rows)
    if (m.kernel.heads <= 16 * m.kernel.kv_heads) packed.push_back(m);
  ASSERT_LT(packed.size(), rows.size());
  const EfficiencyModel packed_model = fit_efficiency(packed, options);
  EXPECT_LE(packed_model.params(KernelClass::AttentionDecode).log_reread_cycles, ClassParams::kNoReread);
  EXPECT_TRUE(packed_model.params(KernelClass::AttentionDecode).ctas_per_kv_head);
  options.transferable_decode = false;
  const EfficiencyModel old_form = fit_efficiency(rows, options);
  EXPECT_FALSE(old_form.params(KernelClass::AttentionDecode).ctas_per_kv_head);
  EXPECT_LE(old_form.params(KernelClass::AttentionDecode).log_reread_cycles, ClassParams::kNoReread);
  std::vector<Measurement> b200_rows;
  for (const Measurement& m : rows)
    if (m.gpu == "b200") b200_rows.push_back(m);
  options.prior = &packed_model;  // new form, re-read rate off: the B200 rows must turn it on
  const EfficiencyModel target_model = fit_efficiency(b200_rows, options);
  const ClassParams& target = target_model.params(KernelClass::AttentionDecode);
  EXPECT_TRUE(target.ctas_per_kv_head);
  EXPECT_NEAR(std::exp(target.log_reread_cycles), 0.05, 0.005);
  const GpuSpec& b200 = *find_builtin_gpu("b200");
  for (const Measurement& m : b200_rows)
    EXPECT_NEAR(target_model.cost(m.kernel, b200).seconds / m.seconds, 1.0, 0.05)
        << m.kernel.heads << "/" << m.kernel.kv_heads << " x" << m.kernel.batch;
  // A GPU's sweep without a group too large to pack does not inform the rate: it keeps the prior's.
  std::vector<Measurement> b200_packed;
  for (const Measurement& m : packed)
    if (m.gpu == "b200") b200_packed.push_back(m);
  ASSERT_FALSE(b200_packed.empty());
  options.prior = &cross_gen;
  const EfficiencyModel unread_model = fit_efficiency(b200_packed, options);
  const ClassParams& unread = unread_model.params(KernelClass::AttentionDecode);
  EXPECT_TRUE(unread.ctas_per_kv_head);
  EXPECT_NEAR(unread.log_reread_cycles, fitted.log_reread_cycles, 1e-3);
}

// A floor counted in cycles (floor_in_cycles): t0_us is the floor at kFloorReferenceClockHz and a
// GPU with another clock scales it; a file without the key keeps seconds on every GPU.
TEST(FloorInCycles, AFasterClockShortensTheFloor) {
  const std::string yaml =
      "kernel_efficiency_model: 1\nclasses:\n  attention_decode: {fitted: true, t0_us: 6, softmax_p: 4, "
      "bytes_per_sm_cycle: 64, floor_in_cycles: true, w_compute: [5], w_memory: [5]}\n"
      "  gemm: {fitted: true, t0_us: 3, softmax_p: 4, bytes_per_sm_cycle: 64, w_compute: [5], w_memory: [5]}\n";
  const EfficiencyModel cycles = EfficiencyModel::from_yaml(yaml, "t.yaml");
  const EfficiencyModel seconds = EfficiencyModel::from_yaml(without(yaml, "floor_in_cycles: true, "), "t.yaml");
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const Kernel tiny = make_attention_decode("d", 1, 16, 8, 8, 128, DType::BF16, DType::BF16);
  const double at_h100 = 6e-6 * 1.5e9 / h100.clock_hz;  // 1830 MHz: 4.92 us
  EXPECT_NEAR(cycles.cost(tiny, h100).launch_seconds, at_h100, 1e-12);
  EXPECT_NEAR(seconds.cost(tiny, h100).launch_seconds, 6e-6, 1e-15);
  GpuSpec twice_the_clock = h100;
  twice_the_clock.clock_hz *= 2;
  EXPECT_NEAR(cycles.cost(tiny, twice_the_clock).launch_seconds, at_h100 / 2, 1e-12);
  EXPECT_NEAR(seconds.cost(tiny, twice_the_clock).launch_seconds, 6e-6, 1e-15);
  // A launch-bound kernel is the floor: twice the clock, half the time.
  EXPECT_NEAR(cycles.cost(tiny, twice_the_clock).seconds / cycles.cost(tiny, h100).seconds, 0.5, 0.02);
  // The flag belongs to its class: the GEMM floor stays in seconds.
  const Kernel small_gemm = make_gemm("g", 1, 64, 64, DType::BF16, 2, 2);
  EXPECT_NEAR(cycles.cost(small_gemm, twice_the_clock).launch_seconds, 3e-6, 1e-15);
  // Round trip keeps it.
  EXPECT_NEAR(EfficiencyModel::from_yaml(cycles.to_yaml(), "again.yaml").cost(tiny, h100).launch_seconds, at_h100,
              1e-12);
}

// The cross-gen fit (attention_floor_in_cycles) recovers a floor in cycles from GPUs of different
// clocks; the GEMM floor stays in seconds; a target fit keeps its prior's form.
TEST(FloorInCycles, TheCrossGenFitCountsAttentionFloorsInCycles) {
  const std::string yaml =
      "kernel_efficiency_model: 1\nclasses:\n  attention_decode: {fitted: true, t0_us: 6, softmax_p: 4, "
      "bytes_per_sm_cycle: 64, floor_in_cycles: true, w_compute: [1], w_memory: [1.5, -1]}\n";
  const EfficiencyModel truth = EfficiencyModel::from_yaml(yaml, "truth.yaml");
  std::vector<Measurement> rows;
  for (const char* gpu_name : {"a100_sxm_80gb", "l40s", "b200"}) {
    const GpuSpec& gpu = *find_builtin_gpu(gpu_name);
    for (std::int64_t seqs : {1, 4, 64, 512})
      for (std::int64_t ctx : {16, 256, 8192}) {
        Measurement m;
        m.gpu = gpu_name;
        m.source = "synthetic";
        m.kernel = make_attention_decode("d", seqs, seqs * ctx, 32, 8, 128, DType::BF16, DType::BF16);
        m.seconds = truth.cost(m.kernel, gpu).seconds;
        rows.push_back(m);
      }
  }
  FitOptions options;
  options.ridge = 1e-6;
  options.transferable_decode = true;
  options.attention_floor_in_cycles = true;
  const EfficiencyModel cross_gen = fit_efficiency(rows, options);
  const ClassParams& fitted = cross_gen.params(KernelClass::AttentionDecode);
  EXPECT_TRUE(fitted.floor_in_cycles);
  EXPECT_NEAR(std::exp(fitted.log_t0), 6e-6, 0.3e-6);
  // Each GPU's floor at its own clock (A100 6.4 us, L40S 3.6 us: no one time in seconds fits both).
  for (const char* gpu_name : {"a100_sxm_80gb", "l40s"}) {
    const Kernel one = make_attention_decode("d", 1, 16, 32, 8, 128, DType::BF16, DType::BF16);
    const GpuSpec& gpu = *find_builtin_gpu(gpu_name);
    EXPECT_NEAR(cross_gen.cost(one, gpu).seconds / truth.cost(one, gpu).seconds, 1.0, 0.02) << gpu_name;
  }
  // An unseen clock: H100's floor is 6 us x 1.5 / 1.83.
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const Kernel tiny = make_attention_decode("d", 1, 16, 32, 8, 128, DType::BF16, DType::BF16);
  EXPECT_NEAR(cross_gen.cost(tiny, h100).seconds / truth.cost(tiny, h100).seconds, 1.0, 0.05);
  EXPECT_FALSE(cross_gen.params(KernelClass::Gemm).floor_in_cycles);
  // A target fit on this prior keeps the form without being asked.
  std::vector<Measurement> l40s_rows;
  for (const Measurement& m : rows)
    if (m.gpu == "l40s") l40s_rows.push_back(m);
  FitOptions target;
  target.ridge = 1e-6;
  target.prior = &cross_gen;
  EXPECT_TRUE(fit_efficiency(l40s_rows, target).params(KernelClass::AttentionDecode).floor_in_cycles);
}
