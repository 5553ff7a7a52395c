#pragma once
// Setting one GpuSpec number from text with its unit ("6TB/s", "989TFLOPS", "80GiB"). The YAML
// catalog loader and the scenario overrides (`--set hardware.gpu.hbm_bandwidth=6TB/s`) share it,
// so a hypothetical GPU is either a spec file or an existing spec plus a few of these keys.
#include <string>
#include <vector>

#include "kernels/gpu_spec.hpp"
#include "base/config/units.hpp"

namespace ks::kernels {

struct GpuField {
  std::string key;  // "hbm_bandwidth", "memory", "l2", "clock", "num_sms", "nvlink_bandwidth",
                    // "pcie_bandwidth", "peak_<dtype>" for every dtype ("peak_bf16", ...)
  config::Dim dim;  // unit family; Dim::None for num_sms
  std::string doc;
};

// Every settable field, in a stable order (for schemas and docs).
const std::vector<GpuField>& gpu_fields();

// Parses text with the field's unit and stores it (peak_<dtype> adds the dtype if it was
// unsupported). Throws std::invalid_argument: unknown key (listing the known ones), a value of
// the wrong unit, or a value that is not positive.
void set_gpu_field(GpuSpec& gpu, const std::string& key, const std::string& text);

}  // namespace ks::kernels
