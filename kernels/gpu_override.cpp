#include "kernels/gpu_override.hpp"

#include <cmath>
#include <stdexcept>

namespace ks::kernels {
namespace {

constexpr DType kDtypes[] = {DType::FP32, DType::FP16, DType::BF16,
                             DType::FP8,  DType::INT8, DType::INT4, DType::FP4};

}  // namespace

const std::vector<GpuField>& gpu_fields() {
  static const std::vector<GpuField> fields = [] {
    std::vector<GpuField> f = {
        {"hbm_bandwidth", config::Dim::Bandwidth, "device memory bandwidth, e.g. '3.35TB/s'"},
        {"memory", config::Dim::Bytes, "device memory capacity, e.g. '80GiB'"},
        {"l2", config::Dim::Bytes, "last-level cache size, e.g. '50MiB'"},
        {"clock", config::Dim::Frequency, "boost clock the peaks are quoted at, e.g. '1830MHz'"},
        {"num_sms", config::Dim::None, "streaming multiprocessors (compute units on AMD)"},
        {"nvlink_bandwidth", config::Dim::Bandwidth,
         "GPU-GPU link bandwidth, bidirectional per GPU, e.g. '900GB/s'"},
        {"pcie_bandwidth", config::Dim::Bandwidth, "host link bandwidth, e.g. '128GB/s'"},
    };
    for (DType dt : kDtypes) {
      const std::string name(dtype_name(dt));
      f.push_back({"peak_" + name, config::Dim::FlopRate,
                   "dense peak " + name + " FLOP/s (OP/s for integers), e.g. '989TFLOPS'"});
    }
    return f;
  }();
  return fields;
}

void set_gpu_field(GpuSpec& gpu, const std::string& key, const std::string& text) {
  const GpuField* field = nullptr;
  for (const GpuField& f : gpu_fields()) {
    if (f.key == key) field = &f;
  }
  if (field == nullptr) {
    std::string known;
    for (const GpuField& f : gpu_fields()) known += (known.empty() ? "" : ", ") + f.key;
    throw std::invalid_argument("unknown GPU field '" + key + "' (known: " + known + ")");
  }
  std::string why;
  const std::optional<double> value = config::parse_quantity(text, field->dim, &why);
  if (!value) throw std::invalid_argument(why);
  if (!(*value > 0.0)) throw std::invalid_argument("must be > 0, got '" + text + "'");

  if (key == "num_sms") {
    if (*value != std::floor(*value) || *value > 1e6) {
      throw std::invalid_argument("expected a whole number of SMs, got '" + text + "'");
    }
    gpu.num_sms = static_cast<int>(*value);
  } else if (key == "hbm_bandwidth") {
    gpu.hbm_bandwidth = *value;
  } else if (key == "memory") {
    gpu.memory_bytes = *value;
  } else if (key == "l2") {
    gpu.l2_bytes = *value;
  } else if (key == "clock") {
    gpu.clock_hz = *value;
  } else if (key == "nvlink_bandwidth") {
    gpu.nvlink_bandwidth = *value;
  } else if (key == "pcie_bandwidth") {
    gpu.pcie_bandwidth = *value;
  } else {
    gpu.peak_flops[*parse_dtype(key.substr(5))] = *value;  // "peak_" + dtype name
  }
}

}  // namespace ks::kernels
