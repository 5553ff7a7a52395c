#include "base/util/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

namespace ks::util {

void ensure_directory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path))
    throw std::invalid_argument("cannot create output directory '" + path + "': " +
                                (ec ? ec.message() : "a file of that name exists") +
                                " (choose another folder with --out or output.dir)");
  if (::access(path.c_str(), W_OK) != 0)
    throw std::invalid_argument("output directory '" + path + "' is not writable: " + std::strerror(errno) +
                                " (choose another folder with --out or output.dir)");
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  // One temporary name per process, so two runs writing the same folder do not clash.
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
    out << contents;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error("error while writing '" + path + "' (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot move '" + tmp + "' to '" + path + "': " + ec.message());
  }
}

}  // namespace ks::util
