#pragma once
// Test helpers: whole files as text, and a fresh temporary folder per test process.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ks::test_support {

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// <tmp>/<prefix>_<name>_<pid>, removed if it exists (not created).
inline std::filesystem::path fresh_temp_dir(const std::string& prefix, const std::string& name) {
  std::filesystem::path d = std::filesystem::temp_directory_path() / (prefix + "_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  return d;
}

}  // namespace ks::test_support
