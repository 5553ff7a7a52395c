#pragma once
// GPU spec files (data/gpus/<name>.yaml) -> GpuSpec. Every number is a mapping
// `{value: 3.35TB/s, source: datasheet, note: "..."}` whose source is a key of the file's
// `sources` table, so no figure enters the catalog without a citation. Format: see
// docs/models-and-gpus.md.
#include <string>
#include <string_view>

#include "kernels/gpu_spec.hpp"

namespace ks::kernels {

// Throws SpecError (kernels/spec_error.hpp) naming the file, line and key, e.g.
// "my_gpu.yaml:7: key 'hbm_bandwidth.value': expected a bandwidth such as '3.35TB/s', got '6TB'".
GpuSpec load_gpu_spec(const std::string& path);

// Same from text; `origin` names the file in messages.
GpuSpec parse_gpu_spec(std::string_view yaml_text, const std::string& origin);

}  // namespace ks::kernels
