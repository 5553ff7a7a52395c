#pragma once
// A user-facing configuration error: names where (file:line:col or the --set override), the key
// path and what was expected. The CLI prints what() and exits with status 2.
#include <stdexcept>
#include <string>

namespace ks::config {

struct SourceMark {
  std::string origin;  // file path, or "--set a.b=c" for overrides, or "<default>"
  int line = 0;        // 1-based; 0 when unknown (overrides, defaults)
  int column = 0;      // 1-based; 0 when unknown

  // "file:12:3", "file", or "--set a.b=c".
  std::string str() const;
};

class ConfigError : public std::runtime_error {
 public:
  // Message format: "<mark>: key '<key_path>': <what>"  (key part omitted when key_path is empty).
  ConfigError(const SourceMark& mark, const std::string& key_path, const std::string& what);

  const SourceMark& mark() const { return mark_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& detail() const { return detail_; }

 private:
  SourceMark mark_;
  std::string key_path_;
  std::string detail_;
};

}  // namespace ks::config
