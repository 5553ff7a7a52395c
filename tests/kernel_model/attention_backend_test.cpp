// Attention backends as a calibration dimension (kernels/attention_backend.hpp): the labels of
// AIConfigurator's tables, the engines' defaults, the per-backend calibration a scenario selects
// and the error for a backend without data; and the fp8 (narrow-dtype) terms that apply to an
// engine's kernels only.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "kernels/attention_backend.hpp"
#include "kernels/calibration_store.hpp"
#include "kernels/efficiency_fit.hpp"
#include "kernels/efficiency_model.hpp"
#include "kernels/gpu_catalog.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/tiers.hpp"

using namespace ks::kernels;

TEST(AttentionBackend, TranslatesAiConfiguratorLabels) {
  EXPECT_EQ(attention_backend_of("sglang", "flash_attention"), "fa3");
  EXPECT_EQ(attention_backend_of("sglang", "fa3"), "fa3");
  EXPECT_EQ(attention_backend_of("sglang", "trtllm_mha"), "trtllm");
  EXPECT_EQ(attention_backend_of("sglang", "triton"), "triton");
  EXPECT_EQ(attention_backend_of("sglang", "flashinfer"), "flashinfer");
  EXPECT_EQ(attention_backend_of("trtllm", "torch_flow"), "trtllm");
  EXPECT_EQ(attention_backend_of("trtllm", "torch_flow_flashinfer"), "flashinfer");
  EXPECT_EQ(attention_backend_of("vllm", "vllm_flash_attn"), "fa2");
  EXPECT_EQ(attention_backend_of("vllm", "vllm_flash_attn_fa2"), "fa2");
  EXPECT_EQ(attention_backend_of("vllm", "vllm_flash_attn_fa3"), "fa3");
  EXPECT_EQ(attention_backend_of("vllm", "vllm_flash_attn_fa4"), "fa4");
  EXPECT_EQ(attention_backend_of("vllm", "vllm_flashinfer_trtllmdecode"), "flashinfer");
  EXPECT_EQ(attention_backend_of("vllm", "vllm_flashinfer_fiprefill"), "flashinfer");
  EXPECT_EQ(attention_backend_of("vllm", "vllm_triton_attn"), "triton");
  EXPECT_EQ(attention_backend_of("vllm", "torch.nn.functional.linear"), "");
  EXPECT_EQ(attention_backend_of("", "fa3"), "");
}

TEST(AttentionBackend, TranslatesMicrobenchLabels) {
  EXPECT_EQ(attention_backend_of("pytorch", "sdpa_flash"), "fa2");
  EXPECT_EQ(attention_backend_of("pytorch", "flash_attn2.7.4"), "fa2");
  EXPECT_EQ(attention_backend_of("pytorch", "fa3"), "fa3");
  EXPECT_EQ(attention_backend_of("pytorch", "fa4"), "fa4");
  EXPECT_EQ(attention_backend_of("pytorch", "sdpa_cudnn"), "");
  EXPECT_EQ(attention_backend_of("pytorch", "sdpa_efficient"), "");
}

TEST(AttentionBackend, EngineDefaultsByGeneration) {
  EXPECT_EQ(default_attention_backend("trtllm", "hopper"), "trtllm");
  EXPECT_EQ(default_attention_backend("vllm", "hopper"), "fa3");
  EXPECT_EQ(default_attention_backend("vllm", "ampere"), "fa2");
  EXPECT_EQ(default_attention_backend("vllm", "blackwell"), "flashinfer");
  EXPECT_EQ(default_attention_backend("sglang", "hopper"), "fa3");
  EXPECT_EQ(default_attention_backend("sglang", "blackwell"), "trtllm");
  EXPECT_EQ(default_attention_backend("sglang", "ada"), "flashinfer");
  EXPECT_EQ(default_attention_backend("", "hopper"), "");
  EXPECT_EQ(attention_backend_path("d/target_h100_sxm.sglang.yaml", "fa3"), "d/target_h100_sxm.sglang.attention-fa3.yaml");
}

namespace {

// A calibration whose classes are all at t0 (floor) plus a tiny body: GEMM floor 5 us, attention
// decode floor `decode_us`.
std::string calibration(double decode_us, const std::string& extra = "") {
  return "kernel_efficiency_model: 1\n" + extra +
         "classes:\n"
         "  gemm: {fitted: true, t0_us: 5, softmax_p: 4, bytes_per_sm_cycle: 64, w_compute: [10], w_memory: [10]}\n"
         "  attention_decode: {fitted: true, t0_us: " +
         std::to_string(decode_us) + ", softmax_p: 4, bytes_per_sm_cycle: 64, w_compute: [10], w_memory: [10]}\n";
}

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("ks_attention_backend_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

// A named backend's file replaces the attention classes only; the GEMM class stays the engine's.
TEST(AttentionBackend, BackendFileReplacesAttentionClassesOnly) {
  TempDir dir;
  const auto base = (dir.path / "cal.sglang.yaml").string();
  write(base, calibration(20, "attention_backends: [fa3, triton]\n"));
  write(dir.path / "cal.sglang.attention-triton.yaml", calibration(40, "attention_backend: triton\n"));
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const Kernel gemm = make_gemm("g", 1, 128, 128, DType::BF16, 2, 2);
  // Decode of 1 sequence, 1 head, 64 keys: the body is nanoseconds, the floor is the time.
  KernelShape decode_shape;
  decode_shape.op = "attention_decode";
  decode_shape.dtype = DType::BF16;
  decode_shape.batch = 1;
  decode_shape.heads = 1;
  decode_shape.kv_heads = 1;
  decode_shape.head_dim = 64;
  decode_shape.kv_len = 64;
  const Kernel decode = build_kernel(decode_shape);

  const auto pooled = tier_model(Tier::Target, "h100_sxm", base, "sglang", "");  // default fa3: no file
  const auto triton = tier_model(Tier::Target, "h100_sxm", base, "sglang", "triton");
  EXPECT_NEAR(pooled->cost(decode, h100).launch_seconds, 20e-6, 1e-9);
  EXPECT_NEAR(triton->cost(decode, h100).launch_seconds, 40e-6, 1e-9);
  EXPECT_NEAR(triton->cost(gemm, h100).launch_seconds, 5e-6, 1e-9);
  EXPECT_EQ(triton->attention_backend, "triton");

  // fa2 has no data here: the error names the backend and lists those that have.
  try {
    tier_model(Tier::Target, "h100_sxm", base, "sglang", "fa2");
    FAIL() << "accepted a backend without data";
  } catch (const AttentionBackendError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'fa2'"), std::string::npos) << what;
    EXPECT_NE(what.find("backends with data here: triton"), std::string::npos) << what;
  }
  // fa3 is one of the pooled backends but has no file of its own: an explicit request is refused.
  EXPECT_THROW(tier_model(Tier::Target, "h100_sxm", base, "sglang", "fa3"), AttentionBackendError);
}

// Left empty, the target tier takes the engine's default backend (SGLang on Hopper: fa3) from its
// own file; the cross-gen tier keeps the engine file's pooled attention.
TEST(AttentionBackend, DefaultIsTheEnginesOnTheTargetTierOnly) {
  TempDir dir;
  const auto base = (dir.path / "cal.sglang.yaml").string();
  write(base, calibration(20, "attention_backends: [fa3, triton]\n"));
  write(dir.path / "cal.sglang.attention-fa3.yaml", calibration(30, "attention_backend: fa3\n"));
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  KernelShape shape;
  shape.op = "attention_decode";
  shape.batch = shape.heads = shape.kv_heads = 1;
  shape.head_dim = shape.kv_len = 64;
  const Kernel decode = build_kernel(shape);
  EXPECT_NEAR(tier_model(Tier::Target, "h100_sxm", base, "sglang")->cost(decode, h100).launch_seconds, 30e-6, 1e-9);
  EXPECT_NEAR(tier_model(Tier::CrossGen, "h100_sxm", base, "sglang")->cost(decode, h100).launch_seconds, 20e-6, 1e-9);
  EXPECT_NEAR(tier_model(Tier::CrossGen, "h100_sxm", base, "sglang", "fa3")->cost(decode, h100).launch_seconds, 30e-6,
              1e-9);
  // Without an engine there is no default backend.
  EXPECT_NEAR(tier_model(Tier::Target, "h100_sxm", base, "")->cost(decode, h100).launch_seconds, 20e-6, 1e-9);
}

// A file whose attention rows were all of one backend is that backend's calibration.
TEST(AttentionBackend, SingleBackendFileServesThatBackend) {
  TempDir dir;
  const auto base = (dir.path / "cal.trtllm.yaml").string();
  write(base, calibration(20, "attention_backends: [trtllm]\n"));
  EXPECT_NO_THROW(tier_model(Tier::Target, "h100_sxm", base, "trtllm", "trtllm"));
  EXPECT_EQ(available_attention_backends(base, *tier_model(Tier::Target, "h100_sxm", base, "trtllm", "")),
            (std::vector<std::string>{"trtllm"}));
  EXPECT_THROW(tier_model(Tier::Target, "h100_sxm", base, "trtllm", "flashinfer"), AttentionBackendError);
}

// Calibration rows record their backends; a backend's fit keeps only its attention rows.
TEST(AttentionBackend, RowsSelectedByBackend) {
  Measurement a;
  a.framework = "vllm";
  a.kernel_source = "vllm_flash_attn_fa3";
  a.kernel.op = OpKind::AttentionPrefill;
  Measurement b = a;
  b.kernel_source = "vllm_triton_attn";
  Measurement g = a;
  g.kernel.op = OpKind::Gemm;
  g.kernel_source = "vllm_flash_attn_fa3";  // a GEMM row has no attention backend, whatever its label
  EXPECT_EQ(row_attention_backend(a), "fa3");
  EXPECT_EQ(row_attention_backend(g), "");
  EXPECT_EQ(attention_rows_of({a, b, g}, "triton").size(), 1u);
}

// The narrow-dtype floor and efficiency term are an engine's quantise-and-scale work: an fp8 GEMM
// from XLA's tables (source flag 1) has neither. Floor t0 = 4 us, floor_narrow = ln 2: an engine's
// fp8 GEMM on H100 (narrow = log2(1979 / 989.4) = 1.00007) has a floor of 4 us x 2^narrow, XLA's 4 us.
TEST(NarrowDtype, FloorAndTermApplyToEngineKernelsOnly) {
  const std::string yaml =
      "kernel_efficiency_model: 1\nclasses:\n  gemm: {fitted: true, t0_us: 4, softmax_p: 4, bytes_per_sm_cycle: 64, "
      "floor_narrow: 0.69314718055994529, w_compute: [1, 0, 0, 0, 0, -2], w_memory: [1]}\n";
  const EfficiencyModel model = EfficiencyModel::from_yaml(yaml, "t.yaml");
  const GpuSpec& h100 = *find_builtin_gpu("h100_sxm");
  const double narrow = std::log2(h100.peak(DType::FP8) / h100.peak(DType::BF16));
  EXPECT_NEAR(narrow, 1.0, 1e-3);
  const Kernel fp8 = make_gemm("g", 1, 128, 128, DType::FP8, 1, 2);
  EXPECT_NEAR(model.cost(fp8, h100).launch_seconds, 4e-6 * std::pow(2.0, narrow), 1e-11);
  EXPECT_NEAR(model.cost(fp8, h100, nullptr, 1.0).launch_seconds, 4e-6, 1e-11);
  EXPECT_DOUBLE_EQ(kernel_features(fp8, h100, 0.0).narrow, narrow);
  EXPECT_DOUBLE_EQ(kernel_features(fp8, h100, 1.0).narrow, 0.0);
  // The efficiency weight on `narrow` (-2: sigmoid(1 - 2 narrow) instead of sigmoid(1)) slows the
  // engine's compute-bound fp8 GEMM, not XLA's.
  const Kernel big = make_gemm("g", 8192, 8192, 8192, DType::FP8, 1, 2);
  const auto& p = model.params(KernelClass::Gemm);
  const double engine = EfficiencyModel::parametric_terms(kernel_features(big, h100, 0.0), p).compute;
  const double xla = EfficiencyModel::parametric_terms(kernel_features(big, h100, 0.0, true, 1.0), p).compute;
  auto sigmoid = [](double z) { return 1.0 / (1.0 + std::exp(-z)); };
  EXPECT_NEAR(engine / xla, sigmoid(1.0) / sigmoid(1.0 - 2.0 * narrow), 1e-9);
  // A 16-bit GEMM is the same for both sources.
  const Kernel bf16 = make_gemm("g", 1, 128, 128, DType::BF16, 2, 2);
  EXPECT_DOUBLE_EQ(model.cost(bf16, h100).seconds, model.cost(bf16, h100, nullptr, 1.0).seconds);
}

// Which sources time the product alone: XLA's tables and microbench.py's PyTorch sweeps
// (torch._scaled_mm on inputs already in fp8); engines' tables and Vidur's profiles do not.
TEST(NarrowDtype, SourcesThatTimeTheProductAlone) {
  EXPECT_EQ(other_source_flag("xla-fp8"), 1.0);
  EXPECT_EQ(other_source_flag("pytorch2.11.0+cu13.0/sdpa_cudnn/compile"), 1.0);
  EXPECT_EQ(other_source_flag("aic-vllm-fp8"), 0.0);
  EXPECT_EQ(other_source_flag("aic-trtllm-fp4"), 0.0);
  EXPECT_EQ(other_source_flag("vidur-fp16"), 0.0);
}

// A backend's cross-gen file starts from its engine's fit on the same GPUs: a term none of the
// backend's GPUs can identify keeps the engine's value. Here vLLM's FA3 decodes ran on Hopper,
// its FA2 decodes on Ampere and Ada only, all priced by a decode whose memory efficiency weighs
// the copy engine (Hopper's, w_memory[5]); the FA2 file must keep that weight, not drop it.
TEST(AttentionBackend, ABackendsCrossGenFileKeepsTheEnginesTermsItsRowsCannotIdentify) {
  const EfficiencyModel truth = EfficiencyModel::from_yaml(
      "kernel_efficiency_model: 1\nclasses:\n  attention_decode: {fitted: true, t0_us: 3, softmax_p: 29, "
      "bytes_per_sm_cycle: 64, ctas_per_kv_head: true, w_compute: [10], w_memory: [0.3, 1, 0, 0, 0, 1.5]}\n",
      "truth.yaml");
  std::vector<Measurement> rows;
  auto add = [&](const std::string& gpu, const std::string& kernel_source) {
    for (std::int64_t seqs : {1, 4, 16, 64, 256})
      for (std::int64_t keys : {512, 2048, 8192, 32768}) {
        Measurement m;
        m.gpu = gpu;
        m.source = "test";
        m.framework = "vllm";
        m.kernel_source = kernel_source;
        m.shape.op = "attention_decode";
        m.shape.dtype = DType::BF16;
        m.shape.batch = seqs;
        m.shape.heads = 32;
        m.shape.kv_heads = 8;
        m.shape.head_dim = 128;
        m.shape.kv_len = keys;
        m.kernel = build_kernel(m.shape);
        m.seconds = truth.cost(m.kernel, *find_builtin_gpu(gpu)).seconds;
        rows.push_back(m);
      }
  };
  add("h100_sxm", "vllm_flash_attn_fa3");
  add("h200", "vllm_flash_attn_fa3");
  add("a100_sxm_80gb", "vllm_flash_attn_fa2");
  add("l40s", "vllm_flash_attn_fa2");
  CrossGenOptions engine_options;
  engine_options.framework = "vllm";
  CrossGenOptions fa2_options = engine_options;
  fa2_options.attention_backend = "fa2";
  const ClassParams engine = fit_cross_gen(rows, engine_options).params(KernelClass::AttentionDecode);
  const EfficiencyModel fa2_model = fit_cross_gen(rows, fa2_options);
  const ClassParams fa2 = fa2_model.params(KernelClass::AttentionDecode);
  ASSERT_GE(engine.wm.size(), 6u);
  ASSERT_GE(fa2.wm.size(), 6u);
  EXPECT_GT(engine.wm[5], 0.5);  // learned from the FA3 rows on Hopper
  EXPECT_NEAR(fa2.wm[5], engine.wm[5], 1e-3);
  EXPECT_EQ(fa2_model.attention_backend, "fa2");
  EXPECT_EQ(fa2_model.attention_backends, (std::vector<std::string>{"fa2"}));
  // The FA2 file still fits its own rows: an Ampere decode priced as measured.
  const Measurement& a100_row = rows[2 * 20 + 10];
  ASSERT_EQ(a100_row.gpu, "a100_sxm_80gb");
  EXPECT_NEAR(fa2_model.cost(a100_row.kernel, *find_builtin_gpu("a100_sxm_80gb")).seconds / a100_row.seconds, 1.0, 0.05);
}
