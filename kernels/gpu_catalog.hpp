#pragma once
// GPU spec files (data/gpus/<name>.yaml) -> GpuSpec. Every number is a mapping
// `{value: 3.35TB/s, source: datasheet, note: "..."}` whose source is a key of the file's
// `sources` table, so no figure enters the catalog without a citation. Format: see
// docs/models-and-gpus.md.
#include <string>
#include <string_view>

#include "kernels/gpu_spec.hpp"

namespace ks::kernels {

// A user's spec file may start from a catalogue GPU (`base: h100_sxm`: every field not given
// comes from it, peak_dense per dtype) and may leave out the peaks that follow from others
// (fp16/bf16 from each other, fp32 from SMs x clock, fp8/int8/int4 from bf16 by generation;
// docs/hardware.md). A number is `{value, source}`, or a bare value when `sources` has one entry.
//
// Throws SpecError (kernels/spec_error.hpp) naming the file, line and key, e.g.
// "my_gpu.yaml:7: key 'hbm_bandwidth.value': expected a bandwidth such as '3.35TB/s', got '6TB'".
// Every problem of the file is collected first: with several, one SpecError lists them all,
// one per line ("my_gpu.yaml: 3 problems in the GPU spec:\n  my_gpu.yaml:4: key ...").
GpuSpec load_gpu_spec(const std::string& path);

// Same from text; `origin` names the file in messages.
GpuSpec parse_gpu_spec(std::string_view yaml_text, const std::string& origin);

// A shipped catalogue file (data/gpus): no `base:` and no derived peaks, every number cited.
GpuSpec parse_catalog_gpu_spec(std::string_view yaml_text, const std::string& origin);

}  // namespace ks::kernels
