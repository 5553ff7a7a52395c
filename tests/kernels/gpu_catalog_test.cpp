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
            "my_gpu.yaml:7: key 'memory.source': missing (expected one of the keys of `sources`)");
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
  EXPECT_NE(error_of("name: x\n? [a, b]\n: 1\n").find("my_gpu.yaml:"), std::string::npos);  // a list as a key
  EXPECT_EQ(error_of(""), "my_gpu.yaml: expected a mapping of GPU fields");
  try {
    load_gpu_spec("no/such/gpu.yaml");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), "no/such/gpu.yaml: cannot read file");
  }
}

// `base:` inheritance: a file naming a catalogue GPU and one number is that GPU with that number.
TEST(GpuCatalog, BaseInheritsEveryFieldNotGiven) {
  const GpuSpec g = parse_gpu_spec(R"(name: h100_hbm4
base: h100_sxm
sources:
  me: "design assumption"
hbm_bandwidth: {value: 6.7TB/s, source: me}
)",
                                   "h100_hbm4.yaml");
  const GpuSpec& h100 = gpu("h100_sxm");
  EXPECT_EQ(g.name, "h100_hbm4");
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth, 6.7e12);  // the one override
  EXPECT_EQ(g.sources.at("hbm_bandwidth"), "design assumption");
  // Everything else is H100 SXM's.
  EXPECT_EQ(g.peak_flops, h100.peak_flops);
  EXPECT_DOUBLE_EQ(g.memory_bytes, 80.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(g.num_sms, 132);
  EXPECT_DOUBLE_EQ(g.l2_bytes, 50.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(g.clock_hz, 1830e6);
  EXPECT_DOUBLE_EQ(g.nvlink_bandwidth, 900e9);
  EXPECT_DOUBLE_EQ(g.pcie_bandwidth, 128e9);
  EXPECT_EQ(g.vendor, "nvidia");
  EXPECT_EQ(g.generation, "hopper");
  EXPECT_EQ(g.description, "based on NVIDIA H100 SXM5 80 GB (HBM3)");
  for (const auto& [field, citation] : h100.sources) {
    if (field != "hbm_bandwidth") {
      EXPECT_EQ(g.sources.at(field), citation) << field;
    }
  }
  EXPECT_EQ(g.source, h100.source + "; design assumption");
}

// peak_dense overrides per dtype: the other peaks stay the base's. A bare value is allowed when
// `sources` has one entry (it cites that one); `sources` itself is optional with a base.
TEST(GpuCatalog, BaseNestedPeaksOverridePerDtype) {
  const GpuSpec g = parse_gpu_spec(R"(name: h200_fp8x
base: h200
description: "H200 with a faster fp8 path"
sources: {me: "assumption"}
peak_dense:
  fp8: 3000TFLOPS
memory: 192GiB
)",
                                   "x.yaml");
  EXPECT_DOUBLE_EQ(g.peak(DType::FP8), 3000e12);
  EXPECT_DOUBLE_EQ(g.peak(DType::BF16), 989.4e12);
  EXPECT_DOUBLE_EQ(g.peak(DType::FP32), 66.9e12);
  EXPECT_DOUBLE_EQ(g.memory_bytes, 192.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth, gpu("h200").hbm_bandwidth);
  EXPECT_EQ(g.description, "H200 with a faster fp8 path");
  // Only a new name: the base under another name.
  const GpuSpec same = parse_gpu_spec("name: renamed\nbase: a40\n", "y.yaml");
  EXPECT_EQ(same.peak_flops, gpu("a40").peak_flops);
  EXPECT_DOUBLE_EQ(same.hbm_bandwidth, gpu("a40").hbm_bandwidth);
}

// Every problem of a file in one error, each with its line, key and expectation.
TEST(GpuCatalog, EveryProblemReportedAtOnceWithItsLine) {
  const std::string text =
      "name: bad_gpu\n"                                       // 1
      "sources:\n"                                            // 2
      "  me: \"assumption\"\n"                                // 3
      "peak_dense:\n"                                         // 4
      "  bf16: {value: 1000TFLOPS, source: me}\n"             // 5
      "hbm_bandwith: {value: 6TB/s, source: me}\n"            // 6: misspelt
      "memory: {value: 96GB/s, source: me}\n"                 // 7: wrong unit
      "num_sms: {value: 100, source: mee}\n"                  // 8: unknown source
      "l2: {value: 64MiB, source: me}\n"                      // 9
      "clock: {value: 2GHz, source: me}\n";                   // 10
  const std::string e = error_of(text);
  EXPECT_EQ(e.rfind("my_gpu.yaml: 4 problems in the GPU spec:\n", 0), 0u) << e;
  EXPECT_NE(e.find("\n  my_gpu.yaml:6: key 'hbm_bandwith': unknown key (did you mean 'hbm_bandwidth'?"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("\n  my_gpu.yaml:7: key 'memory.value': expected a size in bytes such as '80GiB', got '96GB/s'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("\n  my_gpu.yaml:8: key 'num_sms.source': 'mee' is not a key of sources (did you mean 'me'?"),
            std::string::npos)
      << e;
  // hbm_bandwidth itself is then missing: reported too, at the mapping (line 1).
  EXPECT_NE(e.find("\n  my_gpu.yaml:1: key 'hbm_bandwidth': missing (expected a bandwidth such as '3.35TB/s')"),
            std::string::npos)
      << e;
}

// docs/tutorial-architect.md's short HX200 (`base: h100_sxm` + what differs) is the full
// scenarios/gpus/hx200.yaml number for number; only the inherited generation differs.
TEST(GpuCatalog, TutorialShortHx200EqualsTheFullFile) {
  const GpuSpec full = load_gpu_spec("scenarios/gpus/hx200.yaml");
  const GpuSpec shorter = parse_gpu_spec(R"yaml(name: hx200
base: h100_sxm
description: "Hypothetical HX200 (H100-class compute x1.5, 6.7 TB/s HBM, 192 GiB)"
sources: {assumption: "design assumption for docs/tutorial-architect.md (not a real product)"}
peak_dense: {fp32: 100TFLOPS, fp16: 1484TFLOPS, bf16: 1484TFLOPS, fp8: 2968TFLOPS, int8: 2968TFLOPS}
hbm_bandwidth: 6.7TB/s
memory: 192GiB
num_sms: 160
l2: 96MiB
nvlink_bandwidth: 1800GB/s
)yaml",
                                         "hx200_short.yaml");
  EXPECT_EQ(shorter.name, full.name);
  EXPECT_EQ(shorter.description, full.description);
  EXPECT_EQ(shorter.peak_flops, full.peak_flops);
  EXPECT_DOUBLE_EQ(shorter.hbm_bandwidth, full.hbm_bandwidth);
  EXPECT_DOUBLE_EQ(shorter.memory_bytes, full.memory_bytes);
  EXPECT_EQ(shorter.num_sms, full.num_sms);
  EXPECT_DOUBLE_EQ(shorter.l2_bytes, full.l2_bytes);
  EXPECT_DOUBLE_EQ(shorter.clock_hz, full.clock_hz);
  EXPECT_DOUBLE_EQ(shorter.nvlink_bandwidth, full.nvlink_bandwidth);
  EXPECT_DOUBLE_EQ(shorter.pcie_bandwidth, full.pcie_bandwidth);
  EXPECT_EQ(full.generation, "");
  EXPECT_EQ(shorter.generation, "hopper");
}

// The issue's case: three mistakes, three lines, one run.
TEST(GpuCatalog, ThreeProblemsThreeLines) {
  const std::string bad = replace(replace(kMinimal, "source: me}\nl2", "source: mee}\nl2"), "2GHz", "2GB") +
                          "tdp: {value: 700W, source: me}\n";  // line 11
  EXPECT_EQ(error_of(bad),
            "my_gpu.yaml: 3 problems in the GPU spec:\n"
            "  my_gpu.yaml:8: key 'num_sms.source': 'mee' is not a key of sources (did you mean 'me'? sources: me)\n"
            "  my_gpu.yaml:10: key 'clock.value': expected a frequency such as '1.98GHz', got '2GB' (that is a size in "
            "bytes)\n"
            "  my_gpu.yaml:11: key 'tdp': unknown key (expected one of name, description, vendor, generation, scale_up, sources, "
            "peak_dense, base, hbm_bandwidth, memory, l2, clock, num_sms, nvlink_bandwidth, pcie_bandwidth)");
}

TEST(GpuCatalog, BaseMistakes) {
  EXPECT_NE(error_of("name: x\nbase: h100_smx\n").find("my_gpu.yaml:2: key 'base': unknown GPU 'h100_smx' (did you "
                                                       "mean 'h100_sxm'?"),
            std::string::npos);
  // Without a base every required number is missing: all of them are listed.
  const std::string e = error_of("name: x\nsources: {me: y}\npeak_dense: {bf16: {value: 1PFLOPS, source: me}}\n");
  for (const char* key : {"hbm_bandwidth", "memory", "num_sms", "l2", "clock"})
    EXPECT_NE(e.find("key '" + std::string(key) + "': missing (expected"), std::string::npos) << key << "\n" << e;
  EXPECT_NE(e.find("5 problems"), std::string::npos) << e;
  // A bare value needs a single source to cite.
  EXPECT_NE(error_of(replace(kMinimal, "  me: \"hypothetical design, https://example.org/my_gpu\"\n",
                             "  me: \"a\"\n  you: \"b\"\n  them: \"c\"\n") +
                     "nvlink_bandwidth: 900GB/s\n")
                .find("key 'nvlink_bandwidth': expected {value: ..., source: ...} (a bare value"),
            std::string::npos);
  // The shipped catalogue spells every number out.
  try {
    parse_catalog_gpu_spec("name: x\nbase: h100_sxm\n", "data/gpus/x.yaml");
    FAIL();
  } catch (const SpecError& err) {
    EXPECT_NE(std::string(err.what()).find("key 'base': not allowed in the shipped catalogue"), std::string::npos);
  }
}

// Peaks left out follow from the others (docs/hardware.md): 16-bit from each other, fp32 from
// 2 x 128 lanes x SMs x clock, 8-bit at 2x and int4 at 4x the 16-bit rate by generation.
TEST(GpuCatalog, MissingPeaksAreDerived) {
  const GpuSpec hopper = parse_gpu_spec(replace(kMinimal, "name: my_gpu\n", "name: my_gpu\ngeneration: hopper\n"),
                                        "my_gpu.yaml");
  EXPECT_DOUBLE_EQ(hopper.peak(DType::FP16), 1000e12);
  EXPECT_DOUBLE_EQ(hopper.peak(DType::FP32), 2.0 * 128 * 100 * 2e9);  // 51.2 TFLOPS
  EXPECT_DOUBLE_EQ(hopper.peak(DType::FP8), 2000e12);
  EXPECT_DOUBLE_EQ(hopper.peak(DType::INT8), 2000e12);
  EXPECT_FALSE(hopper.supports(DType::INT4));
  EXPECT_EQ(hopper.sources.at("peak_fp8").rfind("derived: ", 0), 0u);
  const GpuSpec ampere = parse_gpu_spec(replace(kMinimal, "name: my_gpu\n", "name: my_gpu\ngeneration: ampere\n"),
                                        "my_gpu.yaml");
  EXPECT_FALSE(ampere.supports(DType::FP8));  // no fp8 tensor cores before Ada / Hopper
  EXPECT_DOUBLE_EQ(ampere.peak(DType::INT8), 2000e12);
  EXPECT_DOUBLE_EQ(ampere.peak(DType::INT4), 4000e12);
  // Unknown generation: only what holds everywhere (16-bit, fp32).
  const GpuSpec plain = parse_gpu_spec(kMinimal, "my_gpu.yaml");
  EXPECT_FALSE(plain.supports(DType::INT8));
  EXPECT_DOUBLE_EQ(plain.peak(DType::FP32), 51.2e12);
  // A given peak is never replaced.
  const GpuSpec given = parse_gpu_spec(
      replace(kMinimal, "  bf16:", "  fp32: {value: 40TFLOPS, source: me}\n  bf16:"), "my_gpu.yaml");
  EXPECT_DOUBLE_EQ(given.peak(DType::FP32), 40e12);
}

// The derivation rule against the shipped catalogue, as docs/hardware.md states it.
TEST(GpuCatalog, DerivationRuleHoldsOnTheCatalogue) {
  for (const std::string& name : builtin_gpu_names()) {
    const GpuSpec& g = gpu(name);
    const double bf16 = g.peak(DType::BF16);
    EXPECT_DOUBLE_EQ(g.peak(DType::FP16), bf16) << name;
    if (g.supports(DType::FP8)) {
      EXPECT_NEAR(g.peak(DType::FP8) / (2 * bf16), 1.0, 0.015) << name;
    }
    EXPECT_NEAR(g.peak(DType::INT8) / (2 * bf16), 1.0, 0.015) << name;
    const double fp32 = 2.0 * 128 * g.num_sms * g.clock_hz;
    const double ratio = g.peak(DType::FP32) / fp32;
    if (name.rfind("a100", 0) == 0) {
      EXPECT_NEAR(ratio, 0.5, 0.005) << name;  // GA100: 64 FP32 lanes per SM
    } else if (name == "h100_sxm" || name == "h200" || name == "h100_pcie") {
      EXPECT_NEAR(ratio, 1.08, 0.01) << name;  // fp32 quoted at the max boost, tensor peaks at a lower clock
    } else if (name == "b200") {
      EXPECT_NEAR(ratio, 1.14, 0.01) << name;
    } else {
      EXPECT_NEAR(ratio, 1.0, 0.005) << name;
    }
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
