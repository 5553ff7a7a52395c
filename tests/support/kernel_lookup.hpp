#pragma once
// Test helpers: the names of a kernel list, a kernel by name, and whether one is there.
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

inline bool has_kernel(const std::vector<kernels::Kernel>& list, const std::string& name) {
  for (const kernels::Kernel& k : list) {
    if (name == k.name) return true;
  }
  return false;
}

}  // namespace ks::test_support
