#pragma once
// The spec of a `catalog` GPU as a scenario gives it (the catalogue entry or spec file, then the
// per-field overrides): what the GPU module prices kernels with, and what the default fabric
// reads its links from (hw/interconnect/fabric_transfer.hpp).
#include "base/config/schema.hpp"
#include "kernels/gpu_spec.hpp"

namespace ks::hw {

// Throws config::ConfigError naming the key (unknown GPU, bad spec file, bad override).
kernels::GpuSpec catalog_gpu_spec(const config::Params& params);

}  // namespace ks::hw
