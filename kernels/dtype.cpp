#include "kernels/dtype.hpp"

#include "kernels/ascii.hpp"

namespace ks::kernels {

double dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::FP32:
      return 4.0;
    case DType::FP16:
      return 2.0;
    case DType::BF16:
      return 2.0;
    case DType::FP8:
      return 1.0;
    case DType::INT8:
      return 1.0;
    case DType::INT4:
      return 0.5;
    case DType::FP4:
      return 0.5 + 1.0 / 16.0;
  }
  return 0.0;  // unreachable with a valid enumerator
}

std::optional<DType> parse_dtype(std::string_view text) {
  struct Alias {
    std::string_view name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"fp32", DType::FP32},     {"float32", DType::FP32}, {"fp16", DType::FP16},
      {"float16", DType::FP16},  {"half", DType::FP16},    {"bf16", DType::BF16},
      {"bfloat16", DType::BF16}, {"fp8", DType::FP8},      {"float8", DType::FP8},
      {"int8", DType::INT8},     {"int4", DType::INT4},    {"fp4", DType::FP4},
      {"nvfp4", DType::FP4},
  };
  for (const Alias& alias : kAliases) {
    if (ascii_iequals(text, alias.name)) return alias.dtype;
  }
  return std::nullopt;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::FP32:
      return "fp32";
    case DType::FP16:
      return "fp16";
    case DType::BF16:
      return "bf16";
    case DType::FP8:
      return "fp8";
    case DType::INT8:
      return "int8";
    case DType::INT4:
      return "int4";
    case DType::FP4:
      return "fp4";
  }
  return "unknown";
}

}  // namespace ks::kernels
