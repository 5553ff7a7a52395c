#include "kernels/gpu_spec.hpp"

#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>

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

bool bulk_async_copy(const GpuSpec& gpu) {
  return gpu.vendor == "nvidia" && (gpu.generation == "hopper" || gpu.generation == "blackwell");
}

bool GpuSpec::operator==(const GpuSpec& o) const {
  auto fields = [](const GpuSpec& g) {
    return std::tie(g.name, g.peak_flops, g.hbm_bandwidth, g.memory_bytes, g.num_sms, g.l2_bytes, g.clock_hz,
                    g.nvlink_bandwidth, g.pcie_bandwidth, g.vendor, g.generation, g.scale_up, g.description, g.source,
                    g.sources);
  };
  return fields(*this) == fields(o);
}

namespace {

// Preset i of builtin_gpu_files(), parsed on first use: a run needs one GPU, and parsing all
// thirteen YAML files cost more than the rest of a short run's start-up. Locked, so that the
// catalogue stays safe to read from several threads as it was when parsed in a function static.
const GpuSpec& preset(std::size_t i) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<const GpuSpec>> parsed(builtin_gpu_files().size());
  const std::lock_guard<std::mutex> lock(mutex);
  if (!parsed[i]) {
    const EmbeddedFile& file = builtin_gpu_files()[i];
    parsed[i] = std::make_unique<const GpuSpec>(
        parse_catalog_gpu_spec(file.text, "data/gpus/" + std::string(file.name) + ".yaml"));
  }
  return *parsed[i];
}

}  // namespace

const GpuSpec* find_builtin_gpu(std::string_view name) {
  // Presets are named as their files (tests/kernels/gpu_spec_test.cpp checks it).
  const auto& files = builtin_gpu_files();
  for (std::size_t i = 0; i < files.size(); ++i)
    if (ascii_iequals(files[i].name, name)) return &preset(i);
  return nullptr;
}

std::vector<std::string> builtin_gpu_names() {
  std::vector<std::string> names;
  for (const EmbeddedFile& file : builtin_gpu_files()) names.emplace_back(file.name);
  return names;
}

}  // namespace ks::kernels
