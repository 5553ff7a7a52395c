#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "kernels/family_errors.hpp"
#include "kernels/kernel_shape.hpp"

using namespace ks::kernels;

namespace {

Measurement row(const KernelShape& shape, double seconds, const std::string& label) {
  Measurement m;
  m.shape = shape;
  m.kernel = build_kernel(shape);
  m.seconds = seconds;
  m.label = label;
  return m;
}

KernelShape gemm(std::int64_t m, std::int64_t nk) {
  KernelShape s;
  s.op = "gemm";
  s.m = m;
  s.n = s.k = nk;
  return s;
}

}  // namespace

// Two GEMM families and a decode family, each row priced at a ratio set by hand:
//   N=K=1024: 1.1 and 0.9 (errors 0.1 + 0.1), N=K=4096: 1.5 (0.5), decode: 1.0 (0).
// Summed error 0.7: shares 0.5/0.7 = 71.43% and 0.2/0.7 = 28.57%; MAPE 50% and 10%; geometric
// mean ratio 1.5 and sqrt(1.1 x 0.9) = 0.99499.
TEST(FamilyErrors, ShareMapeAndBiasPerShapeFamily) {
  KernelShape decode;
  decode.op = "attention_decode";
  decode.batch = 8;
  decode.heads = 32;
  decode.kv_heads = 8;
  decode.head_dim = 128;
  decode.kv_len = 8 * 1024;
  const std::vector<Measurement> rows = {row(gemm(16, 1024), 10e-6, "a"), row(gemm(64, 1024), 20e-6, "b"),
                                         row(gemm(16, 4096), 30e-6, "c"), row(decode, 40e-6, "d")};
  const std::map<std::string, double> ratio = {{"a", 1.1}, {"b", 0.9}, {"c", 1.5}, {"d", 1.0}};
  const auto families = family_errors(rows, [&](const Measurement& m) { return m.seconds * ratio.at(m.label); });
  ASSERT_EQ(families.size(), 3u);
  EXPECT_EQ(families[0].family, "gemm bf16 N=4096 K=4096");
  EXPECT_NEAR(families[0].share, 100.0 * 0.5 / 0.7, 1e-9);
  EXPECT_NEAR(families[0].mape, 50.0, 1e-9);
  EXPECT_NEAR(families[0].geo_ratio, 1.5, 1e-12);
  EXPECT_EQ(families[0].n, 1u);
  EXPECT_EQ(families[1].family, "gemm bf16 N=1024 K=1024");
  EXPECT_NEAR(families[1].share, 100.0 * 0.2 / 0.7, 1e-9);
  EXPECT_NEAR(families[1].mape, 10.0, 1e-9);
  EXPECT_NEAR(families[1].geo_ratio, std::sqrt(1.1 * 0.9), 1e-12);
  EXPECT_EQ(families[1].n, 2u);
  EXPECT_EQ(families[2].family, "attention_decode bf16 heads=32/8 head_dim=128");
  EXPECT_NEAR(families[2].share, 0.0, 1e-12);

  const std::string text = format_families(families, 2);
  EXPECT_NE(text.find("(2 of 3)"), std::string::npos) << text;
  EXPECT_NE(text.find("   71.4%   50.0%      1.500       1  gemm bf16 N=4096 K=4096\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("attention_decode"), std::string::npos) << text;  // beyond the limit
}
