#pragma once
// Test helper: a kind's parameters resolved from inline YAML, as a scenario section would be.
#include <deque>
#include <string>

#include "base/config/document.hpp"

namespace ks::test_support {

inline config::Params resolve_params(const std::string& yaml, const config::Schema& schema) {
  static std::deque<config::Document> docs;  // Params keep marks into their document
  docs.push_back(config::Document::parse(yaml, "test.yaml"));
  return docs.back().root().resolve(schema);
}

}  // namespace ks::test_support
