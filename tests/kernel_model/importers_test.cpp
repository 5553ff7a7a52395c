#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/util/csv.hpp"
#include "kernels/importers.hpp"

using namespace ks::kernels;
namespace fs = std::filesystem;

namespace {
fs::path fixture_dir() {
  const fs::path d = fs::temp_directory_path() / ("ks_import_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d / "org" / "Tiny-GQA");
  return d;
}
}  // namespace

// A two-row Vidur mlp.csv of a GQA model (32 heads, 8 KV heads, hidden 4096, MLP 14336), TP 1 and 2.
TEST(Importers, VidurMlpRowsBecomeTheLayersKernels) {
  const fs::path dir = fixture_dir();
  std::string ops[] = {"emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
                       "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"};
  std::ofstream out(dir / "org" / "Tiny-GQA" / "mlp.csv");
  for (const auto& op : ops) out << "time_stats." << op << ".median,";
  out << "n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers\n";
  for (int row = 0; row < 2; ++row) {
    for (int i = 0; i < 10; ++i) out << (i + 1) * 0.01 << ",";
    out << "32,8,4096,14336,128256,True,512," << (row + 1) << "\n";
  }
  out.close();
  const auto m = import_vidur(dir.string(), "a100_sxm_80gb");
  ASSERT_EQ(m.size(), 20u);
  const Measurement* qkv_tp2 = nullptr;
  for (const auto& x : m)
    if (x.label == "attn_pre_proj" && x.shape.n == (16 + 2 * 4) * 128) qkv_tp2 = &x;
  ASSERT_NE(qkv_tp2, nullptr) << "TP2 splits 32 heads and 8 KV heads in two";
  EXPECT_EQ(qkv_tp2->shape.m, 512);
  EXPECT_EQ(qkv_tp2->shape.k, 4096);
  EXPECT_DOUBLE_EQ(qkv_tp2->seconds, 0.03e-3);
  EXPECT_EQ(qkv_tp2->model, "tiny-gqa");
  EXPECT_EQ(qkv_tp2->gpu, "a100_sxm_80gb");
  for (const auto& x : m) {
    if (x.label == "mlp_up_proj" && x.shape.n == 2 * 14336) {
      EXPECT_EQ(x.shape.k, 4096);
    }
  }
  fs::remove_all(dir);
  EXPECT_THROW(import_vidur("/nonexistent", "a40"), CsvError);
}

TEST(Importers, GemmTableMapsGpusAndDtypesAndSkipsAmbiguousRows) {
  const fs::path dir = fixture_dir();
  const fs::path f = dir / "gemm.csv";
  std::ofstream(f) << "gpu,b,m,n,k,dtype,tflops,time_us\n"
                      "B200 (sm_100),1,256,256,256,bf16xbf16->bf16,6.765,4.96\n"
                      "B200 (sm_100),1,256,256,256,f32xf32->f32,5.066,6.624\n"
                      "MI355X (gfx950),2,512,256,1024,f8e4m3fnxf8e4m3fn->bf16,1,10\n"
                      "MI355X (gfx950),2,512,256,1024,f8e4m3fnxf8e5m2->f32,1,11\n";
  const auto m = import_gemm_table(f.string());
  ASSERT_EQ(m.size(), 2u);  // f32 skipped, the second fp8 variant of the same shape dropped
  EXPECT_EQ(m[0].gpu, "b200");
  EXPECT_EQ(m[0].shape.dtype, DType::BF16);
  EXPECT_EQ(m[1].gpu, "mi355x");
  EXPECT_EQ(m[1].shape.dtype, DType::FP8);
  EXPECT_DOUBLE_EQ(m[1].kernel.flops, 2.0 * 2 * 512 * 256 * 1024);
  EXPECT_DOUBLE_EQ(m[1].seconds, 10e-6);
  fs::remove_all(dir);
}
