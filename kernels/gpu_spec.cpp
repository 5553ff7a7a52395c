#include "kernels/gpu_spec.hpp"

#include <stdexcept>

#include "kernels/ascii.hpp"

namespace ks::kernels {

double GpuSpec::peak(DType dtype) const {
  auto it = peak_flops.find(dtype);
  if (it == peak_flops.end()) {
    throw std::invalid_argument("GPU '" + name + "' does not support " +
                                std::string(dtype_name(dtype)) + " (no peak FLOP/s given)");
  }
  return it->second;
}

namespace {

constexpr double kTera = 1e12;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

const std::vector<GpuSpec>& presets() {
  // Dense figures only: datasheets print sparse tensor rates (2x) next to the dense ones.
  static const std::vector<GpuSpec> gpus = {
      {"h100_sxm",
       {{DType::FP32, 66.9 * kTera},
        {DType::FP16, 989.4 * kTera},
        {DType::BF16, 989.4 * kTera},
        {DType::FP8, 1978.9 * kTera},
        {DType::INT8, 1978.9 * kTera}},  // Hopper has no INT4 tensor-core path
       3.35e12,
       80 * kGiB,
       132,
       50 * kMiB,
       1.83e9,
       "NVIDIA H100 Tensor Core GPU datasheet (https://www.nvidia.com/en-us/data-center/h100/): "
       "80 GB HBM3, 3.35 TB/s; NVIDIA H100 Tensor Core GPU Architecture whitepaper "
       "(https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper), H100 SXM5 "
       "column: dense FP32 66.9, FP16/BF16 989.4, FP8 1978.9 TFLOPS, INT8 1978.9 TOPS, 132 SMs, "
       "50 MB L2; tensor-core peaks are quoted at 1830 MHz (FP32 at the 1980 MHz max boost)"},
      {"a100_sxm_80gb",
       {{DType::FP32, 19.5 * kTera},
        {DType::FP16, 312 * kTera},
        {DType::BF16, 312 * kTera},
        {DType::INT8, 624 * kTera},
        {DType::INT4, 1248 * kTera}},  // Ampere has no FP8 tensor cores
       2.039e12,
       80 * kGiB,
       108,
       40 * kMiB,
       1.41e9,
       "NVIDIA A100 Tensor Core GPU datasheet "
       "(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
       "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): A100 80GB SXM, 2,039 GB/s HBM2e, "
       "dense FP32 19.5, FP16/BF16 312 TFLOPS, INT8 624, INT4 1248 TOPS; NVIDIA A100 Tensor Core "
       "GPU Architecture whitepaper: 108 SMs, 40 MB L2, 1410 MHz boost"},
      {"a100_sxm_40gb",
       {{DType::FP32, 19.5 * kTera},
        {DType::FP16, 312 * kTera},
        {DType::BF16, 312 * kTera},
        {DType::INT8, 624 * kTera},
        {DType::INT4, 1248 * kTera}},
       1.555e12,
       40 * kGiB,
       108,
       40 * kMiB,
       1.41e9,
       "NVIDIA A100 Tensor Core GPU datasheet "
       "(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
       "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): A100 40GB SXM, 1,555 GB/s "
       "HBM2, dense FP32 19.5, FP16/BF16 312 TFLOPS, INT8 624, INT4 1248 TOPS; NVIDIA A100 "
       "whitepaper: 108 SMs, 40 MB L2, 1410 MHz boost"},
      {"a40",
       {{DType::FP32, 37.4 * kTera},
        {DType::FP16, 149.7 * kTera},
        {DType::BF16, 149.7 * kTera},
        {DType::INT8, 299.3 * kTera},
        {DType::INT4, 598.7 * kTera}},
       696e9,
       48 * kGiB,
       84,
       6 * kMiB,
       1.74e9,
       "NVIDIA A40 datasheet (https://images.nvidia.com/content/Solutions/data-center/a40/"
       "nvidia-a40-datasheet.pdf): 48 GB GDDR6, 696 GB/s, dense FP32 37.4, FP16/BF16 149.7 "
       "TFLOPS, INT8 299.3, INT4 598.7 TOPS; NVIDIA Ampere GA102 GPU Architecture whitepaper: "
       "84 SMs, 6 MB L2, 1740 MHz boost"},
      {"b200",
       {{DType::FP32, 80.0 * kTera},
        {DType::FP16, 2250 * kTera},
        {DType::BF16, 2250 * kTera},
        {DType::FP8, 4500 * kTera},
        {DType::INT8, 4500 * kTera}},
       7.7e12,
       180e9,
       148,
       126 * kMiB,
       1.965e9,
       "NVIDIA DGX B200 specifications (https://www.nvidia.com/en-us/data-center/dgx-b200/), per GPU, dense: FP16/BF16 2.25 PFLOPS, FP8 4.5 "
       "PFLOPS, HBM3e 180 GB at 7.7 TB/s (KernelSight DESIGN.md section 6 figures)"},
      {"mi355x",
       {{DType::FP32, 157.3 * kTera},
        {DType::FP16, 2500 * kTera},
        {DType::BF16, 2500 * kTera},
        {DType::FP8, 5000 * kTera},
        {DType::INT8, 5000 * kTera}},
       8.0e12,
       288e9,
       256,
       256 * kMiB,
       2.4e9,
       "AMD Instinct MI355X (https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html), dense: FP16/BF16 2.5 PFLOPS, FP8 5.0 PFLOPS, FP32 vector "
       "157.3 TFLOPS, 288 GB HBM3E at 8 TB/s, 256 CUs, 256 MB Infinity Cache"},
  };
  return gpus;
}

}  // namespace

const GpuSpec* find_builtin_gpu(std::string_view name) {
  for (const GpuSpec& gpu : presets()) {
    if (ascii_iequals(gpu.name, name)) return &gpu;
  }
  return nullptr;
}

std::vector<std::string> builtin_gpu_names() {
  std::vector<std::string> names;
  for (const GpuSpec& gpu : presets()) names.push_back(gpu.name);
  return names;
}

}  // namespace ks::kernels
