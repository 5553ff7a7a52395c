// The AIConfigurator import (data/sweeps/aiconfigurator, scripts/aiconfigurator/convert.mjs) and the
// optional sweep columns it uses: framework, version, kernel_source, kv_dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "base/util/csv.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/sweep.hpp"

using namespace ks::kernels;

namespace {

const char* kOldHeader =
    "gpu,source,model,label,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len,time_us";

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

TEST(AiconfiguratorSweeps, EveryShippedFileLoadsWithKnownGpusAndEngineColumns) {
  const std::filesystem::path dir = "data/sweeps/aiconfigurator";
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  std::set<std::string> gpus_seen;
  std::map<std::string, std::size_t> fp4_gemms;  // NVFP4 GEMM rows per GPU
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".csv") continue;
    ++files;
    const std::string path = entry.path().string();
    // <aiconfigurator system>.<framework>.csv
    const std::string stem = entry.path().stem().string();
    const std::string framework = stem.substr(stem.find('.') + 1);
    ASSERT_TRUE(framework == "trtllm" || framework == "vllm" || framework == "sglang") << path;

    const std::string header = first_line(path);
    EXPECT_EQ(header.rfind(kOldHeader, 0), 0u) << path;
    EXPECT_NE(header.find(",framework,version,kernel_source,kv_dtype"), std::string::npos) << path;

    const std::vector<Measurement> rows = read_sweep(path);
    ASSERT_GT(rows.size(), 0u) << path;
    std::set<std::string> ops;
    // Whole N x K families: every kept GEMM family carries a full M sweep, not a few stray rows.
    std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::set<std::int64_t>> gemm_ms;
    for (const Measurement& m : rows) {
      ASSERT_NE(find_builtin_gpu(m.gpu), nullptr) << path << ": GPU '" << m.gpu << "' not in the catalogue";
      gpus_seen.insert(m.gpu);
      ASSERT_GT(m.seconds, 0) << path;
      ASSERT_LT(m.seconds, 10.0) << path;  // latencies are ms in the source: a slip to s would show here
      EXPECT_EQ(m.framework, framework) << path;
      EXPECT_FALSE(m.version.empty()) << path;
      EXPECT_FALSE(m.kernel_source.empty()) << path;
      EXPECT_EQ(m.source.rfind("aic-" + framework + "-", 0), 0u) << path << ": " << m.source;
      ops.insert(m.shape.op);
      if (m.shape.op == "gemm") {
        EXPECT_FALSE(m.shape.kv_dtype.has_value()) << path;
        gemm_ms[{m.source, m.shape.n, m.shape.k}].insert(m.shape.m);
        if (m.shape.dtype == DType::FP4) {
          ++fp4_gemms[m.gpu];
          // The GPU prices them: its catalogue entry has an fp4 peak (NVFP4 tensor cores).
          EXPECT_TRUE(find_builtin_gpu(m.gpu)->supports(DType::FP4)) << path;
        }
      } else if (m.shape.op == "attention_prefill") {
        EXPECT_TRUE(m.shape.kv_dtype.has_value()) << path;
        EXPECT_EQ(m.shape.q_len, m.shape.kv_len) << path;  // whole-prompt prefill, nothing cached
      } else if (m.shape.op == "attention_decode") {
        EXPECT_TRUE(m.shape.kv_dtype.has_value()) << path;
        // The collectors sweep cached lengths 2^i - 1; a decode step reads those plus its own token.
        EXPECT_TRUE(power_of_two(m.shape.kv_len)) << path << ": kv_len " << m.shape.kv_len;
      } else {
        ADD_FAILURE() << path << ": unexpected op " << m.shape.op;
      }
    }
    EXPECT_EQ(ops.count("gemm"), 1u) << path;
    EXPECT_EQ(ops.count("attention_decode"), 1u) << path;
    for (const auto& [family, ms] : gemm_ms) EXPECT_GE(ms.size(), 10u) << path << " " << std::get<0>(family);
  }
  EXPECT_GE(files, 15u);  // five GPUs x three engines at least
  for (const char* gpu : {"a100_sxm_80gb", "h100_sxm", "h200", "b200", "l40s"}) EXPECT_EQ(gpus_seen.count(gpu), 1u) << gpu;
  // AIConfigurator measured NVFP4 GEMMs on Blackwell under every engine; they are imported as fp4.
  EXPECT_EQ(fp4_gemms.size(), 1u);
  EXPECT_GE(fp4_gemms["b200"], 3u * 500u);
}

TEST(SweepOptionalColumns, RoundTripAndKvDtypeReachesTheAttentionKernel) {
  const std::string header = std::string(kOldHeader) + ",framework,version,kernel_source,kv_dtype\n";
  const auto rows = parse_sweep(header +
                                    "h100_sxm,aic-vllm-bf16,,generation_attention,attention_decode,bf16,,,,8,,,32,8,128,,"
                                    "1000,20,vllm,0.24.0,FLASH_ATTN,fp8\n"
                                    "h100_sxm,aic-vllm-bf16,,generation_attention,attention_decode,bf16,,,,8,,,32,8,128,,"
                                    "1000,21,vllm,0.24.0,FLASH_ATTN,\n"
                                    "h100_sxm,aic-vllm-bf16,,gemm,gemm,bf16,64,4096,2048,,,,,,,,,10,vllm,0.24.0,,\n",
                                "new.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].framework, "vllm");
  EXPECT_EQ(rows[0].version, "0.24.0");
  EXPECT_EQ(rows[0].kernel_source, "FLASH_ATTN");
  ASSERT_TRUE(rows[0].shape.kv_dtype.has_value());
  EXPECT_EQ(*rows[0].shape.kv_dtype, DType::FP8);
  EXPECT_FALSE(rows[1].shape.kv_dtype.has_value());  // blank: the activation dtype
  EXPECT_TRUE(rows[2].kernel_source.empty());
  // An fp8 cache halves the K/V traffic: 8 sequences x 1000 keys read plus 8 new keys written, K and
  // V of 8 heads x 128 dims, one byte per element less than bf16. The query/output side is unchanged.
  EXPECT_DOUBLE_EQ(rows[1].kernel.bytes - rows[0].kernel.bytes, (8.0 * 1000 + 8) * 2 * 8 * 128 * 1);
  EXPECT_DOUBLE_EQ(rows[1].kernel.flops, rows[0].kernel.flops);

  const std::string text = format_sweep(rows);
  EXPECT_EQ(text.substr(0, text.find('\n') + 1), header);
  const auto again = parse_sweep(text, "again.csv");
  ASSERT_EQ(again.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(again[i].framework, rows[i].framework);
    EXPECT_EQ(again[i].version, rows[i].version);
    EXPECT_EQ(again[i].kernel_source, rows[i].kernel_source);
    EXPECT_EQ(again[i].shape.kv_dtype, rows[i].shape.kv_dtype);
    EXPECT_DOUBLE_EQ(again[i].kernel.bytes, rows[i].kernel.bytes);
    EXPECT_NEAR(again[i].seconds, rows[i].seconds, 1e-12);
  }
  EXPECT_EQ(format_sweep(again), text);
}

TEST(SweepOptionalColumns, AbsentColumnsAreBlankAndOldFilesKeepTheirFormat) {
  const std::string old_text = std::string(kOldHeader) +
                               "\n"
                               "a100_sxm_80gb,vidur-fp16,llama,attn,attention_decode,fp16,,,,4,,,32,32,128,,512,15\n"
                               "a100_sxm_80gb,vidur-fp16,llama,mlp,gemm,fp16,16,4096,4096,1,,,,,,,,12.5\n";
  const auto rows = parse_sweep(old_text, "old.csv");
  ASSERT_EQ(rows.size(), 2u);
  for (const Measurement& m : rows) {
    EXPECT_TRUE(m.framework.empty());
    EXPECT_TRUE(m.version.empty());
    EXPECT_TRUE(m.kernel_source.empty());
    EXPECT_FALSE(m.shape.kv_dtype.has_value());
  }
  EXPECT_EQ(format_sweep(rows), old_text);  // byte for byte (canonical form: GEMM batch 1 written), no new columns

  // The shipped pre-existing sweeps read as before: no engine columns, the old header on output.
  for (const char* path : {"data/sweeps/a40.vidur.csv", "data/sweeps/xla_gemm.csv"}) {
    const auto shipped = read_sweep(path);
    ASSERT_GT(shipped.size(), 0u) << path;
    for (const Measurement& m : shipped) {
      ASSERT_TRUE(m.framework.empty() && m.version.empty() && m.kernel_source.empty()) << path;
      ASSERT_FALSE(m.shape.kv_dtype.has_value()) << path;
    }
    const std::string text = format_sweep(shipped);
    EXPECT_EQ(text.substr(0, text.find('\n')), kOldHeader) << path;
  }
}

TEST(SweepOptionalColumns, BadKvDtypeNamesFileLineAndColumn) {
  const std::string text = std::string(kOldHeader) +
                           ",kv_dtype\n"
                           "h100_sxm,s,,,attention_decode,bf16,,,,8,,,32,8,128,,1000,20,fp8\n"
                           "h100_sxm,s,,,attention_decode,bf16,,,,8,,,32,8,128,,1000,20,fp7\n";
  try {
    parse_sweep(text, "bad.csv");
    FAIL() << "expected a CsvError";
  } catch (const CsvError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.csv:3"), std::string::npos) << what;
    EXPECT_NE(what.find("kv_dtype"), std::string::npos) << what;
    EXPECT_NE(what.find("fp7"), std::string::npos) << what;
  }
}
