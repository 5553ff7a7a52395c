#include "kernels/dtype.hpp"

#include <gtest/gtest.h>

namespace ks::kernels {
namespace {

TEST(DType, BytesPerElement) {
  EXPECT_EQ(dtype_bytes(DType::FP32), 4.0);
  EXPECT_EQ(dtype_bytes(DType::FP16), 2.0);
  EXPECT_EQ(dtype_bytes(DType::BF16), 2.0);
  EXPECT_EQ(dtype_bytes(DType::FP8), 1.0);
  EXPECT_EQ(dtype_bytes(DType::INT8), 1.0);
  EXPECT_EQ(dtype_bytes(DType::INT4), 0.5);
}

TEST(DType, ParsesShortAndHfNames) {
  EXPECT_EQ(parse_dtype("fp32"), DType::FP32);
  EXPECT_EQ(parse_dtype("fp16"), DType::FP16);
  EXPECT_EQ(parse_dtype("float16"), DType::FP16);
  EXPECT_EQ(parse_dtype("bf16"), DType::BF16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::BF16);
  EXPECT_EQ(parse_dtype("BF16"), DType::BF16);
  EXPECT_EQ(parse_dtype("fp8"), DType::FP8);
  EXPECT_EQ(parse_dtype("int8"), DType::INT8);
  EXPECT_EQ(parse_dtype("int4"), DType::INT4);
  EXPECT_FALSE(parse_dtype("fp64").has_value());
  EXPECT_FALSE(parse_dtype("").has_value());
  EXPECT_FALSE(parse_dtype("bf16 ").has_value());
}

TEST(DType, NameRoundTrips) {
  for (DType d : {DType::FP32, DType::FP16, DType::BF16, DType::FP8, DType::INT8, DType::INT4}) {
    EXPECT_EQ(parse_dtype(dtype_name(d)), d) << dtype_name(d);
  }
  EXPECT_EQ(dtype_name(DType::BF16), "bf16");
}

}  // namespace
}  // namespace ks::kernels
