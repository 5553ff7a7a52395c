#pragma once
// Test helpers: the names of a kernel list, a kernel by name, and whether one is there.
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernel_list.hpp"

namespace ks::test_support {

inline std::vector<std::string> kernel_names(const kernels::KernelList& list) {
  std::vector<std::string> out;
  for (const kernels::Kernel& k : list) out.emplace_back(k.name);
  return out;
}

inline const kernels::Kernel& kernel_named(const kernels::KernelList& list, const std::string& name) {
  for (const kernels::Kernel& k : list) {
    if (name == k.name) return k;
  }
  throw std::runtime_error("no kernel " + name);
}

inline bool has_kernel(const kernels::KernelList& list, const std::string& name) {
  for (const kernels::Kernel& k : list) {
    if (name == k.name) return true;
  }
  return false;
}

// Names of the kernels of `after` in chunks that are not the very chunk `before` has at the same
// index: what a consumer that kept `before` (the GPU, its prices) must look at again.
inline std::vector<std::string> kernels_in_new_chunks(const kernels::KernelList& before,
                                                      const kernels::KernelList& after) {
  std::vector<std::string> out;
  for (std::size_t c = 0; c < after.chunks().size(); ++c) {
    if (c < before.chunks().size() && before.chunks()[c] == after.chunks()[c]) continue;
    for (const kernels::Kernel& k : after.chunks()[c]->kernels) out.emplace_back(k.name);
  }
  return out;
}

}  // namespace ks::test_support
