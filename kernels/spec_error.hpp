#pragma once
// A malformed model or GPU description file. The message names the file and the key so a user
// can fix it without reading our code: "models/x.json: key 'num_attention_heads': expected ...".
#include <stdexcept>
#include <string>

namespace ks::kernels {

class SpecError : public std::invalid_argument {
 public:
  // key may be empty when the problem is the whole file (unreadable, not JSON/YAML).
  SpecError(std::string file, std::string key, const std::string& what)
      : std::invalid_argument(file + ": " + (key.empty() ? "" : "key '" + key + "': ") + what),
        file_(std::move(file)),
        key_(std::move(key)) {}

  const std::string& file() const { return file_; }
  const std::string& key() const { return key_; }

 private:
  std::string file_;
  std::string key_;
};

}  // namespace ks::kernels
