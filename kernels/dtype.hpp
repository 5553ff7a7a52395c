#pragma once
// Numeric formats a kernel can store or compute in.
#include <optional>
#include <string_view>

namespace ks::kernels {

enum class DType { FP32, FP16, BF16, FP8, INT8, INT4 };

// Storage size of one element; INT4 packs two per byte, hence 0.5.
double dtype_bytes(DType dtype);

// Accepts "fp32", "fp16", "bf16", "fp8", "int8", "int4" and the HF/PyTorch spellings
// "float32", "float16", "half", "bfloat16", "float8"; ASCII case-insensitive.
std::optional<DType> parse_dtype(std::string_view text);

// Canonical short name ("bf16"); parse_dtype(dtype_name(d)) == d.
std::string_view dtype_name(DType dtype);

}  // namespace ks::kernels
