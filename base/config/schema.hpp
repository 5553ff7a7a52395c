#pragma once
// Declarative parameter lists. Every configurable component (a registered kind, or a fixed
// scenario section) declares a Schema; `kernelsight describe` prints it and Section::resolve()
// checks a YAML mapping against it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/config/error.hpp"
#include "base/config/units.hpp"

namespace ks::config {

enum class ParamType { Int, Float, Bool, String, Enum, Quantity };

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Float;
  Dim dim = Dim::None;                       // for Quantity
  std::optional<std::string> default_text;   // YAML scalar text; nullopt -> required
  std::string doc;
  std::vector<std::string> choices;          // for Enum
  std::optional<double> min;                 // inclusive lower bound (Int, Float, Quantity)
  std::optional<double> max;                 // inclusive upper bound
  bool min_exclusive = false;                // true: value must be > min (e.g. rates, bandwidths)

  bool required() const { return !default_text.has_value(); }
};

class Schema {
 public:
  Schema() = default;
  explicit Schema(std::string doc) : doc_(std::move(doc)) {}

  // Builders return *this so a kind can declare its parameters in one expression.
  Schema& integer(std::string name, std::optional<std::int64_t> def, std::string doc,
                  std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt);
  Schema& number(std::string name, std::optional<double> def, std::string doc,
                 std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt);
  Schema& flag(std::string name, std::optional<bool> def, std::string doc);
  Schema& string(std::string name, std::optional<std::string> def, std::string doc);
  Schema& choice(std::string name, std::vector<std::string> choices, std::optional<std::string> def,
                 std::string doc);
  // Quantities with a unit; `def` is written with its unit, e.g. "5us". Positive unless min given.
  Schema& quantity(std::string name, Dim dim, std::optional<std::string> def, std::string doc,
                   std::optional<double> min = 0.0, bool min_exclusive = true);
  Schema& add(ParamSpec spec);

  const std::string& doc() const { return doc_; }
  const std::vector<ParamSpec>& params() const { return params_; }
  const ParamSpec* find(const std::string& name) const;

 private:
  std::string doc_;
  std::vector<ParamSpec> params_;
};

using Value = std::variant<std::int64_t, double, bool, std::string>;

// The resolved parameters of one section: every schema parameter has a value (given or default),
// quantities converted to SI. Getters throw std::logic_error for a name not in the schema or of
// another type: that is a programming error, not a user error.
class Params {
 public:
  std::int64_t integer(const std::string& name) const;
  double number(const std::string& name) const;    // Float or Quantity (SI) or Int (converted)
  bool flag(const std::string& name) const;
  const std::string& string(const std::string& name) const;  // String or Enum
  const SourceMark& mark(const std::string& name) const;     // where the value came from
  const std::string& path() const { return path_; }         // key path of the section, "hardware.gpu"
  bool has(const std::string& name) const { return values_.count(name) != 0; }

  // Used by Section::resolve (and by tests that build Params by hand).
  void set(const std::string& name, Value value, SourceMark mark);
  void set_path(std::string path) { path_ = std::move(path); }

 private:
  const Value& get(const std::string& name) const;
  std::string path_;
  std::map<std::string, std::pair<Value, SourceMark>> values_;
};

}  // namespace ks::config
