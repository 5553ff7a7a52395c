#include "base/registry/registry.hpp"

namespace ks::registry {
namespace {
std::map<std::string, RegistryBase*>& registries() {
  static std::map<std::string, RegistryBase*> all;
  return all;
}
}  // namespace

RegistryBase::RegistryBase(std::string category) : category_(std::move(category)) {
  registries()[category_] = this;
}

const std::map<std::string, RegistryBase*>& all_registries() { return registries(); }

KindInfo find_kind(const std::string& name) {
  std::vector<KindInfo> matches;
  std::vector<std::string> known;
  for (const auto& [category, reg] : registries()) {
    for (const auto& info : reg->kinds()) {
      known.push_back(category + "." + info.kind);
      if (name == info.kind || name == category + "." + info.kind) matches.push_back(info);
    }
  }
  if (matches.size() == 1) return matches.front();
  std::string list;
  if (matches.empty()) {
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw std::invalid_argument("unknown kind '" + name + "'; registered kinds: " + list);
  }
  for (const auto& m : matches) list += (list.empty() ? "" : ", ") + m.category + "." + m.kind;
  throw std::invalid_argument("kind '" + name + "' is ambiguous; use one of: " + list);
}

}  // namespace ks::registry
