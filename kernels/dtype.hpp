#pragma once
// Numeric formats a kernel can store or compute in.
#include <optional>
#include <string_view>

namespace ks::kernels {

// FP4 is NVFP4 (e2m1 values with one e4m3 scale per 16; Blackwell's and CDNA4's fp4 tensor cores):
// a weight format, with its GEMMs computing in fp4 (W4A4).
enum class DType { FP32, FP16, BF16, FP8, INT8, INT4, FP4 };

// Storage size of one element; INT4 packs two per byte, hence 0.5; FP4 adds its block scale:
// 4 bits + 8 bits / 16 = 0.5625 bytes.
double dtype_bytes(DType dtype);

// Accepts "fp32", "fp16", "bf16", "fp8", "int8", "int4", "fp4" and the HF/PyTorch spellings
// "float32", "float16", "half", "bfloat16", "float8", "nvfp4"; ASCII case-insensitive.
std::optional<DType> parse_dtype(std::string_view text);

// Canonical short name ("bf16"); parse_dtype(dtype_name(d)) == d.
std::string_view dtype_name(DType dtype);

}  // namespace ks::kernels
