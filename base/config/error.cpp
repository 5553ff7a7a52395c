#include "base/config/error.hpp"

namespace ks::config {

std::string SourceMark::str() const {
  if (line <= 0) return origin;
  std::string out = origin + ":" + std::to_string(line);
  if (column > 0) out += ":" + std::to_string(column);
  return out;
}

namespace {

std::string format_message(const SourceMark& mark, const std::string& key_path,
                           const std::string& what) {
  std::string out = mark.str() + ": ";
  if (!key_path.empty()) out += "key '" + key_path + "': ";
  return out + what;
}

}  // namespace

ConfigError::ConfigError(const SourceMark& mark, const std::string& key_path,
                         const std::string& what)
    : std::runtime_error(format_message(mark, key_path, what)),
      mark_(mark),
      key_path_(key_path),
      detail_(what) {}

}  // namespace ks::config
