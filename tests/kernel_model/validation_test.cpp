#include <gtest/gtest.h>

#include "kernels/kernel_builders.hpp"
#include "kernels/validation.hpp"

using namespace ks::kernels;

TEST(Validation, MapeAndMedianPerLabelAndGroup) {
  std::vector<Measurement> rows;
  const double measured[] = {10e-6, 20e-6, 40e-6};
  for (double s : measured) {
    Measurement m;
    m.label = "attn_pre_proj";
    m.kernel = make_gemm("gemm", 1, 1, 1, DType::FP16, 2, 2);
    m.seconds = s;
    rows.push_back(m);
  }
  Measurement e;
  e.label = "add";
  e.kernel = make_add("add", 1, 1, DType::FP16);
  e.seconds = 5e-6;
  rows.push_back(e);
  // The tier is 10% high everywhere; the "roofline" is half of the truth.
  const auto r = evaluate(rows, [](const Measurement& m) { return m.seconds * 1.1; },
                          [](const Measurement& m) { return m.seconds * 0.5; });
  EXPECT_NEAR(r.by_label.at("attn_pre_proj").first.mape, 10.0, 1e-9);
  EXPECT_NEAR(r.by_group.at("gemm").second.mape, 50.0, 1e-9);
  EXPECT_EQ(r.by_group.at("elementwise").first.n, 1u);
  EXPECT_NEAR(r.overall.first.median_ape, 10.0, 1e-9);
  const std::string text = format_report(r, "target");
  EXPECT_NE(text.find("kernel MAPE: tier target 10.00% roofline 50.00%"), std::string::npos) << text;
  EXPECT_NEAR(error_stats({1, 2, 3, 10}).median_ape, 2.5, 1e-12);
}
