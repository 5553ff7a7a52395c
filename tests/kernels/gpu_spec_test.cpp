#include "kernels/gpu_spec.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ks::kernels {
namespace {

const GpuSpec& gpu(const char* name) {
  const GpuSpec* g = find_builtin_gpu(name);
  if (g == nullptr) throw std::runtime_error(std::string("missing preset ") + name);
  return *g;
}

TEST(GpuSpec, DensePeaksNotSparse) {
  EXPECT_NEAR(gpu("h100_sxm").peak(DType::BF16), 989e12, 1e12);
  EXPECT_NEAR(gpu("h100_sxm").peak(DType::FP8), 1979e12, 1e12);
  EXPECT_DOUBLE_EQ(gpu("a100_sxm_80gb").peak(DType::BF16), 312e12);
  EXPECT_DOUBLE_EQ(gpu("a100_sxm_40gb").peak(DType::FP16), 312e12);
  EXPECT_DOUBLE_EQ(gpu("a40").peak(DType::BF16), 149.7e12);
  EXPECT_DOUBLE_EQ(gpu("a100_sxm_80gb").peak(DType::FP32), 19.5e12);
}

TEST(GpuSpec, UnsupportedDtypeThrows) {
  EXPECT_THROW(gpu("a100_sxm_80gb").peak(DType::FP8), std::invalid_argument);
  EXPECT_THROW(gpu("a40").peak(DType::FP8), std::invalid_argument);
  EXPECT_FALSE(gpu("a100_sxm_40gb").supports(DType::FP8));
  EXPECT_TRUE(gpu("h100_sxm").supports(DType::FP8));
}

TEST(GpuSpec, MemoryAndBandwidth) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  EXPECT_DOUBLE_EQ(gpu("h100_sxm").memory_bytes, 80 * gib);
  EXPECT_DOUBLE_EQ(gpu("a100_sxm_40gb").memory_bytes, 40 * gib);
  EXPECT_DOUBLE_EQ(gpu("h100_sxm").hbm_bandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(gpu("a100_sxm_80gb").hbm_bandwidth, 2.039e12);
  EXPECT_DOUBLE_EQ(gpu("a100_sxm_40gb").hbm_bandwidth, 1.555e12);
  EXPECT_DOUBLE_EQ(gpu("a40").hbm_bandwidth, 696e9);
  EXPECT_EQ(gpu("h100_sxm").num_sms, 132);
  EXPECT_EQ(gpu("a40").num_sms, 84);
}

TEST(GpuSpec, EveryPresetCitesASource) {
  ASSERT_EQ(builtin_gpu_names().size(), 13u);
  for (const std::string& name : builtin_gpu_names()) {
    const GpuSpec& g = gpu(name.c_str());
    EXPECT_EQ(g.name, name) << "a preset is named as its file (the catalogue lists file names)";
    EXPECT_NE(g.source.find("https://"), std::string::npos) << name;
    EXPECT_GT(g.l2_bytes, 0) << name;
    EXPECT_GT(g.clock_hz, 0) << name;
  }
  EXPECT_EQ(find_builtin_gpu("H100_SXM"), find_builtin_gpu("h100_sxm"));
  EXPECT_EQ(find_builtin_gpu("tpu_v5"), nullptr);
}

// Presets are parsed on first use; threads looking them up at once must all get the one parsed
// spec of each name (the catalogue is shared, read-only data).
TEST(GpuSpec, ConcurrentLookupsShareOneSpecPerPreset) {
  const std::vector<std::string> names = builtin_gpu_names();
  std::vector<std::vector<const GpuSpec*>> seen(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&names, &out = seen[t], t] {
      for (std::size_t i = 0; i < names.size(); ++i)  // each thread in its own order
        out.push_back(find_builtin_gpu(names[(i + t * 3) % names.size()]));
    });
  for (std::thread& th : threads) th.join();
  for (std::size_t t = 0; t < seen.size(); ++t)
    for (std::size_t i = 0; i < names.size(); ++i) {
      const GpuSpec* spec = seen[t][i];
      ASSERT_NE(spec, nullptr);
      EXPECT_EQ(spec->name, names[(i + t * 3) % names.size()]);
      EXPECT_EQ(spec, find_builtin_gpu(spec->name));
    }
}

// A100 tensor peak = SMs x 1024 dense FP16 FMA/clk x 2 x boost clock; checks the preset is
// self-consistent (so clock-based models later agree with the quoted peaks).
TEST(GpuSpec, A100PeakMatchesSmsTimesClock) {
  const GpuSpec& a100 = gpu("a100_sxm_80gb");
  EXPECT_NEAR(a100.num_sms * 2048.0 * a100.clock_hz, a100.peak(DType::BF16), 1e12);
}

}  // namespace
}  // namespace ks::kernels
