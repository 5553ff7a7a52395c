#pragma once
// Where the data shipped with KernelSight (measurement sweeps, calibrations) lives: the
// KERNELSIGHT_DATA_DIR environment variable if set, else the folder fixed at build time
// (the source tree's data/, or the installed share/kernelsight/data).
#include <string>

namespace ks::kernels {

std::string data_dir();

}  // namespace ks::kernels
