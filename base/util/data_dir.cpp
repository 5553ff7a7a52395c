#include "base/util/data_dir.hpp"

#include <cstdlib>

#ifndef KS_DATA_DIR
#define KS_DATA_DIR "data"
#endif

namespace ks::kernels {

std::string data_dir() {
  if (const char* env = std::getenv("KERNELSIGHT_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return KS_DATA_DIR;
}

}  // namespace ks::kernels
