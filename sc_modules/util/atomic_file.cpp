#include "sc_modules/util/atomic_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace ks::util {

void ensure_directory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path))
    throw std::runtime_error("cannot create output directory '" + path + "': " +
                             (ec ? ec.message() : "a file of that name exists"));
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write '" + path + "'");
    out << contents;
    out.flush();
    if (!out) throw std::runtime_error("error while writing '" + path + "'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot move '" + tmp + "' to '" + path + "': " + ec.message());
  }
}

}  // namespace ks::util
