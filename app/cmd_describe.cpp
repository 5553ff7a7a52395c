// `kernelsight describe KIND`: a kind's parameters with types, units, defaults and docs.
#include <iostream>

#include "app/commands.hpp"
#include "sc_modules/config/units.hpp"
#include "sc_modules/registry/registry.hpp"

namespace ks::app {
namespace {

std::string type_text(const config::ParamSpec& p) {
  switch (p.type) {
    case config::ParamType::Int: return "integer";
    case config::ParamType::Float: return "number";
    case config::ParamType::Bool: return "bool";
    case config::ParamType::String: return "string";
    case config::ParamType::Enum: {
      std::string s = "one of ";
      for (std::size_t i = 0; i < p.choices.size(); ++i) s += (i ? "|" : "") + p.choices[i];
      return s;
    }
    case config::ParamType::Quantity:
      return std::string(config::dim_name(p.dim)) + " (e.g. " + std::string(config::dim_example(p.dim)) + ")";
  }
  return "?";
}

}  // namespace

int cmd_describe(const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] == "-h" || args[0] == "--help") {
    std::ostream& out = args.size() == 1 ? std::cout : std::cerr;
    out << "kernelsight describe KIND\n\nPrints the parameters of a registered kind (see `kernelsight list`):\n"
           "name, type with unit, default (or 'required') and what it means. KIND is `kind` or\n"
           "`category.kind`, e.g. `poisson` or `gpu.catalog`.\n";
    return args.size() == 1 ? kExitOk : kExitBadInput;
  }
  registry::KindInfo info;
  try {
    info = registry::find_kind(args[0]);
  } catch (const std::invalid_argument& e) {
    std::cerr << "kernelsight describe: " << e.what() << "\n";
    return kExitBadInput;
  }
  std::cout << info.category << "." << info.kind << ": " << info.doc << "\n";
  if (info.schema->params().empty()) {
    std::cout << "  (no parameters)\n";
    return kExitOk;
  }
  std::cout << "parameters:\n";
  for (const auto& p : info.schema->params()) {
    std::cout << "  " << p.name << "  [" << type_text(p) << "]  "
              << (p.required() ? "required" : "default: " + *p.default_text) << "\n      " << p.doc << "\n";
  }
  return kExitOk;
}

}  // namespace ks::app
