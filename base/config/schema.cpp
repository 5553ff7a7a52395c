#include "base/config/schema.hpp"

#include <algorithm>
#include <stdexcept>

namespace ks::config {

Schema& Schema::integer(std::string name, std::optional<std::int64_t> def, std::string doc,
                        std::optional<double> min, std::optional<double> max) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::Int;
  if (def) spec.default_text = std::to_string(*def);
  spec.doc = std::move(doc);
  spec.min = min;
  spec.max = max;
  return add(std::move(spec));
}

Schema& Schema::number(std::string name, std::optional<double> def, std::string doc,
                       std::optional<double> min, std::optional<double> max) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::Float;
  if (def) spec.default_text = format_quantity(*def, Dim::None);
  spec.doc = std::move(doc);
  spec.min = min;
  spec.max = max;
  return add(std::move(spec));
}

Schema& Schema::flag(std::string name, std::optional<bool> def, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::Bool;
  if (def) spec.default_text = *def ? "true" : "false";
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

Schema& Schema::string(std::string name, std::optional<std::string> def, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::String;
  spec.default_text = std::move(def);
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

Schema& Schema::choice(std::string name, std::vector<std::string> choices,
                       std::optional<std::string> def, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::Enum;
  spec.choices = std::move(choices);
  spec.default_text = std::move(def);
  spec.doc = std::move(doc);
  return add(std::move(spec));
}

Schema& Schema::quantity(std::string name, Dim dim, std::optional<std::string> def, std::string doc,
                         std::optional<double> min, bool min_exclusive) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = ParamType::Quantity;
  spec.dim = dim;
  spec.default_text = std::move(def);
  spec.doc = std::move(doc);
  spec.min = min;
  spec.min_exclusive = min_exclusive;
  return add(std::move(spec));
}

// Declaration mistakes are caught here, when the kind registers, rather than in a user's run.
Schema& Schema::add(ParamSpec spec) {
  if (spec.name.empty()) throw std::logic_error("schema parameter with an empty name");
  if (find(spec.name))
    throw std::logic_error("schema parameter '" + spec.name + "' declared twice");
  if (spec.type == ParamType::Enum) {
    if (spec.choices.empty())
      throw std::logic_error("enum parameter '" + spec.name + "' has no choices");
    if (spec.default_text && std::find(spec.choices.begin(), spec.choices.end(),
                                       *spec.default_text) == spec.choices.end())
      throw std::logic_error("default '" + *spec.default_text + "' of parameter '" + spec.name +
                             "' is not one of its choices");
  }
  if (spec.type == ParamType::Quantity && spec.default_text) {
    std::string why;
    if (!parse_quantity(*spec.default_text, spec.dim, &why))
      throw std::logic_error("default of parameter '" + spec.name + "': " + why);
  }
  params_.push_back(std::move(spec));
  return *this;
}

const ParamSpec* Schema::find(const std::string& name) const {
  for (const ParamSpec& spec : params_)
    if (spec.name == name) return &spec;
  return nullptr;
}

void Params::set(const std::string& name, Value value, SourceMark mark) {
  values_[name] = {std::move(value), std::move(mark)};
}

const Value& Params::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    throw std::logic_error("no parameter '" + name + "' in section '" + path_ + "'");
  return it->second.first;
}

namespace {

[[noreturn]] void wrong_type(const std::string& path, const std::string& name, const char* wanted) {
  throw std::logic_error("parameter '" + name + "' in section '" + path + "' is not " + wanted);
}

}  // namespace

std::int64_t Params::integer(const std::string& name) const {
  if (auto* v = std::get_if<std::int64_t>(&get(name))) return *v;
  wrong_type(path_, name, "an integer");
}

double Params::number(const std::string& name) const {
  const Value& value = get(name);
  if (auto* v = std::get_if<double>(&value)) return *v;
  if (auto* v = std::get_if<std::int64_t>(&value)) return static_cast<double>(*v);
  wrong_type(path_, name, "a number");
}

bool Params::flag(const std::string& name) const {
  if (auto* v = std::get_if<bool>(&get(name))) return *v;
  wrong_type(path_, name, "a flag");
}

const std::string& Params::string(const std::string& name) const {
  if (auto* v = std::get_if<std::string>(&get(name))) return *v;
  wrong_type(path_, name, "a string");
}

const SourceMark& Params::mark(const std::string& name) const {
  get(name);
  return values_.find(name)->second.second;
}

}  // namespace ks::config
