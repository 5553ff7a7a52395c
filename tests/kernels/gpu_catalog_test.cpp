#include "kernels/gpu_catalog.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/gpu_override.hpp"
#include "kernels/roofline.hpp"
#include "kernels/spec_error.hpp"

namespace ks::kernels {
namespace {

const GpuSpec& gpu(const std::string& name) {
  const GpuSpec* g = find_builtin_gpu(name);
  if (g == nullptr) throw std::runtime_error("missing GPU " + name);
  return *g;
}

TEST(GpuCatalog, EveryShippedSpecLoadsWithASourcePerNumber) {
  const std::vector<std::string> expected = {
      "a100_sxm_40gb", "a100_sxm_80gb", "a100_pcie_80gb", "a40",  "a10g",   "l4",     "l40s",
      "h100_sxm",      "h100_pcie",     "h200",           "b200", "mi300x", "mi355x"};
  ASSERT_EQ(builtin_gpu_names().size(), expected.size());
  for (const std::string& name : expected) {
    // The shipped file on disk and the embedded copy agree.
    const GpuSpec from_file = load_gpu_spec("data/gpus/" + name + ".yaml");
    const GpuSpec& g = gpu(name);
    EXPECT_EQ(from_file.name, name);
    EXPECT_EQ(from_file.peak_flops, g.peak_flops) << name;
    for (const char* field : {"hbm_bandwidth", "memory", "num_sms", "l2", "clock", "peak_bf16",
                              "peak_fp16", "peak_fp32", "pcie_bandwidth"}) {
      ASSERT_EQ(g.sources.count(field), 1u) << name << " " << field;
      EXPECT_NE(g.sources.at(field).find("https://"), std::string::npos) << name << " " << field;
    }
    EXPECT_GT(g.peak(DType::BF16), 0) << name;
    EXPECT_GT(g.l2_bytes, 0) << name;
    EXPECT_FALSE(g.description.empty()) << name;
  }
}

// DESIGN.md section 6 figures (dense), to 1%.
TEST(GpuCatalog, DensePeaksAndBandwidthsMatchTheReferenceTable) {
  struct Row {
    const char* name;
    double bf16_tflops, fp8_tflops, bw_gbs;
    int sms;
  };
  const Row rows[] = {
      {"a100_sxm_40gb", 312, 0, 1555, 108}, {"a100_sxm_80gb", 312, 0, 2039, 108},
      {"a40", 149.7, 0, 696, 84},           {"h100_sxm", 989, 1979, 3350, 132},
      {"h100_pcie", 756, 1513, 2000, 114},  {"h200", 989, 1979, 4800, 132},
      {"b200", 2250, 4500, 8000, 148},      {"l40s", 362, 733, 864, 142},
      {"mi300x", 1307, 2615, 5300, 304},    {"mi355x", 2500, 5000, 8000, 256},
  };
  for (const Row& r : rows) {
    const GpuSpec& g = gpu(r.name);
    EXPECT_NEAR(g.peak(DType::BF16) / 1e12, r.bf16_tflops, r.bf16_tflops * 0.01) << r.name;
    if (r.fp8_tflops > 0) {
      EXPECT_NEAR(g.peak(DType::FP8) / 1e12, r.fp8_tflops, r.fp8_tflops * 0.01) << r.name;
    } else {
      EXPECT_FALSE(g.supports(DType::FP8)) << r.name;
    }
    EXPECT_NEAR(g.hbm_bandwidth / 1e9, r.bw_gbs, r.bw_gbs * 0.01) << r.name;
    EXPECT_EQ(g.num_sms, r.sms) << r.name;
  }
  // Not the sparse figure (1979): the mistake DESIGN.md warns about.
  EXPECT_NEAR(gpu("h100_sxm").peak(DType::BF16), 989e12, 1e12);
  EXPECT_DOUBLE_EQ(gpu("h100_sxm").nvlink_bandwidth, 900e9);
  EXPECT_DOUBLE_EQ(gpu("l4").nvlink_bandwidth, 0.0);
  EXPECT_DOUBLE_EQ(gpu("h200").memory_bytes, 141.0 * 1024 * 1024 * 1024);
}

constexpr const char* kMinimal = R"(name: my_gpu
sources:
  me: "hypothetical design, https://example.org/my_gpu"
peak_dense:
  bf16: {value: 1000TFLOPS, source: me}
hbm_bandwidth: {value: 6TB/s, source: me}
memory: {value: 96GiB, source: me}
num_sms: {value: 100, source: me}
l2: {value: 64MiB, source: me}
clock: {value: 2GHz, source: me}
)";

std::string error_of(const std::string& yaml) {
  try {
    parse_gpu_spec(yaml, "my_gpu.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(GpuCatalog, HypotheticalSpecFile) {
  const GpuSpec g = parse_gpu_spec(kMinimal, "my_gpu.yaml");
  EXPECT_EQ(g.name, "my_gpu");
  EXPECT_DOUBLE_EQ(g.peak(DType::BF16), 1000e12);
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth, 6e12);
  EXPECT_DOUBLE_EQ(g.memory_bytes, 96.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(g.num_sms, 100);
  EXPECT_DOUBLE_EQ(g.clock_hz, 2e9);
  EXPECT_FALSE(g.supports(DType::FP8));
  EXPECT_EQ(g.source, "hypothetical design, https://example.org/my_gpu");
}

TEST(GpuCatalog, MalformedSpecsNameFileLineAndKey) {
  EXPECT_EQ(error_of(replace(kMinimal, "6TB/s", "6TB")),
            "my_gpu.yaml:6: key 'hbm_bandwidth.value': expected a bandwidth such as '3.35TB/s', "
            "got '6TB' (that is a size in bytes)");
  EXPECT_EQ(error_of(replace(kMinimal, "{value: 96GiB, source: me}", "{value: 96GiB}")),
            "my_gpu.yaml:7: key 'memory.source': missing");
  EXPECT_NE(error_of(replace(kMinimal, "{value: 100, source: me}", "{value: 100, source: them}"))
                .find("key 'num_sms.source': 'them' is not a key of sources"),
            std::string::npos);
  EXPECT_NE(error_of(replace(kMinimal, "l2:", "l3:")).find("key 'l3': unknown key"),
            std::string::npos);
  EXPECT_NE(error_of(replace(kMinimal, "bf16:", "bfloat17:")).find("key 'peak_dense.bfloat17'"),
            std::string::npos);
  EXPECT_NE(error_of(replace(kMinimal, "num_sms: {value: 100, source: me}\n", ""))
                .find("key 'num_sms': missing"),
            std::string::npos);
  EXPECT_NE(error_of(replace(kMinimal, "num_sms: {value: 100", "num_sms: {value: 10.5"))
                .find("whole number"),
            std::string::npos);
  EXPECT_NE(error_of("name: [unclosed").find("my_gpu.yaml:"), std::string::npos);
  try {
    load_gpu_spec("no/such/gpu.yaml");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), "no/such/gpu.yaml: cannot read file");
  }
}

// Overrides over an existing spec move the roofline exactly as the changed number says.
TEST(GpuCatalog, OverridesChangeTheRoofline) {
  GpuSpec h100 = gpu("h100_sxm");
  // Memory-bound decode GEMM: 8 tokens x 4096 -> 4096, bf16.
  Kernel decode{OpKind::Gemm, "o_proj", DType::BF16, 8, 4096, 4096, 2.0 * 8 * 4096 * 4096,
                2.0 * (8 * 4096 + 8 * 4096 + 4096.0 * 4096), Phase::Decode, 1};
  // Compute-bound prefill GEMM: 8192 tokens.
  Kernel prefill{OpKind::Gemm, "o_proj", DType::BF16, 8192, 4096, 4096,
                 2.0 * 8192 * 4096 * 4096, 2.0 * (2 * 8192 * 4096 + 4096.0 * 4096),
                 Phase::Prefill, 1};
  EXPECT_DOUBLE_EQ(roofline_cost(decode, h100, 0).seconds, decode.bytes / 3.35e12);
  set_gpu_field(h100, "hbm_bandwidth", "6.7TB/s");
  EXPECT_DOUBLE_EQ(roofline_cost(decode, h100, 0).seconds, decode.bytes / 6.7e12);
  EXPECT_DOUBLE_EQ(roofline_cost(prefill, h100, 0).seconds, prefill.flops / 989.4e12);
  set_gpu_field(h100, "peak_bf16", "1978.8TFLOPS");
  EXPECT_DOUBLE_EQ(roofline_cost(prefill, h100, 0).seconds, prefill.flops / 1978.8e12);
  EXPECT_DOUBLE_EQ(ridge_point(h100, DType::BF16), 1978.8e12 / 6.7e12);
  // A dtype the GPU lacked becomes available.
  GpuSpec a100 = gpu("a100_sxm_80gb");
  set_gpu_field(a100, "peak_fp8", "624TFLOPS");
  EXPECT_DOUBLE_EQ(a100.peak(DType::FP8), 624e12);
  set_gpu_field(a100, "num_sms", "128");
  EXPECT_EQ(a100.num_sms, 128);

  EXPECT_THROW(set_gpu_field(a100, "hbm_bandwidth", "6TFLOPS"), std::invalid_argument);
  EXPECT_THROW(set_gpu_field(a100, "hbm_bandwidth", "0TB/s"), std::invalid_argument);
  try {
    set_gpu_field(a100, "hbm_bw", "6TB/s");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown GPU field 'hbm_bw'"), std::string::npos);
  }
}

}  // namespace
}  // namespace ks::kernels
