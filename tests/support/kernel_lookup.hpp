#pragma once
// Test helpers: the names of a kernel list, and a kernel by name.
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"

namespace ks::test_support {

inline std::vector<std::string> kernel_names(const std::vector<kernels::Kernel>& list) {
  std::vector<std::string> out;
  for (const kernels::Kernel& k : list) out.emplace_back(k.name);
  return out;
}

inline const kernels::Kernel& kernel_named(const std::vector<kernels::Kernel>& list, const std::string& name) {
  for (const kernels::Kernel& k : list) {
    if (name == k.name) return k;
  }
  throw std::runtime_error("no kernel " + name);
}

}  // namespace ks::test_support
