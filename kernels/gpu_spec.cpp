#include "kernels/gpu_spec.hpp"

#include <stdexcept>

#include "kernels/ascii.hpp"
#include "kernels/builtin_data.hpp"
#include "kernels/gpu_catalog.hpp"

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

const std::vector<GpuSpec>& presets() {
  static const std::vector<GpuSpec> gpus = [] {
    std::vector<GpuSpec> out;
    for (const EmbeddedFile& file : builtin_gpu_files()) {
      out.push_back(parse_gpu_spec(file.text, "data/gpus/" + std::string(file.name) + ".yaml"));
    }
    return out;
  }();
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
