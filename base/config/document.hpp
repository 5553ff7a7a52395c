#pragma once
// A scenario document: YAML loaded with source marks, `--set a.b.c=value` overrides applied on top,
// sections read through Section views that remember which keys were used, so that any key nobody
// read is reported as unknown (with a "did you mean"), and the resolved configuration (defaults
// filled in) can be written next to the results.
#include <memory>
#include <string>
#include <vector>

#include "base/config/error.hpp"
#include "base/config/schema.hpp"

namespace YAML {
class Node;
}

namespace ks::config {

class Document;

// A view on one mapping in the document. Cheap to copy.
class Section {
 public:
  const std::string& path() const;  // "" for the root, "hardware.gpu" for a nested one
  bool has(const std::string& key) const;
  SourceMark mark() const;                       // where this mapping starts
  SourceMark mark(const std::string& key) const; // where key's value is (or the section's mark)

  // A nested mapping. Missing and required -> ConfigError "missing required section";
  // missing and optional (`required=false`) -> an empty section (created in the resolved output).
  // Present but not a mapping -> ConfigError "expected a mapping".
  Section section(const std::string& key, bool required = true) const;

  // The `kind:` string of a polymorphic section (e.g. hardware.gpu). Missing and no default ->
  // ConfigError. Marks the key as used.
  std::string kind(const std::optional<std::string>& default_kind = std::nullopt) const;

  // Checks every schema parameter: type, unit, bounds, enum choice; fills defaults into the
  // document; reports missing required keys. Marks the schema's keys (and `kind`) as used.
  // Keys in the mapping that the schema does not know are NOT reported here but by
  // Document::check_unused(), so that a section can be read by several schemas.
  Params resolve(const Schema& schema) const;

  // Every key present in this mapping, in document order.
  std::vector<std::string> keys() const;

 private:
  friend class Document;
  Section(Document* doc, std::string path);
  Document* doc_;
  std::string path_;
};

class Document {
 public:
  // Throws ConfigError (file:line:col) for unreadable files and malformed YAML; the root must be a mapping.
  static Document load_file(const std::string& path);
  static Document parse(const std::string& text, const std::string& origin);

  Document(Document&&) noexcept;
  Document& operator=(Document&&) noexcept;
  ~Document();

  // "a.b.c=value": value is parsed as a YAML scalar/flow node ("8/s", "[1,2]", "{kind: x}").
  // Creates intermediate mappings as needed. Errors name the override: "--set a.b.c=value: ...".
  void apply_override(const std::string& assignment);

  Section root();
  const std::string& origin() const;

  // Throws ConfigError for the first key (document order, depth first) that no Section read,
  // e.g. "quick.yaml:7:3: key 'workload.num_reqests': unknown key (did you mean 'num_requests'?
  // known keys: kind, num_requests, rate, ...)". Known keys are those read or declared by a
  // resolved schema for that mapping.
  void check_unused() const;

  // The resolved configuration (overrides applied, defaults filled), as YAML text.
  std::string resolved_yaml() const;

 private:
  friend class Section;
  Document();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Levenshtein-based suggestion: the closest candidate within distance max(2, len/3), or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace ks::config
