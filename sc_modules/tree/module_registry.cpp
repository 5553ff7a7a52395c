#include "sc_modules/tree/module_registry.hpp"

#include <stdexcept>

namespace ks::tree {

void ModuleRegistry::add_parameter(const sc_core::sc_object& owner, const std::string& name, std::string value) {
  objects_[owner.name()].parameters[name] = std::move(value);
}

void ModuleRegistry::add_statistic(const sc_core::sc_object& owner, const std::string& name,
                                   std::function<double()> read) {
  auto& stats = objects_[owner.name()].statistics;
  if (!stats.emplace(name, std::move(read)).second)
    throw std::logic_error(std::string(owner.name()) + ": statistic '" + name + "' registered twice");
}

std::pair<std::string, std::string> ModuleRegistry::split(const std::string& path) {
  const auto dot = path.rfind('.');
  if (dot == std::string::npos) return {std::string(), path};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

std::optional<double> ModuleRegistry::statistic(const std::string& path) const {
  const auto [object, name] = split(path);
  const auto it = objects_.find(object);
  if (it == objects_.end()) return std::nullopt;
  const auto s = it->second.statistics.find(name);
  if (s == it->second.statistics.end()) return std::nullopt;
  return s->second();
}

std::optional<std::string> ModuleRegistry::parameter(const std::string& path) const {
  const auto [object, name] = split(path);
  const auto it = objects_.find(object);
  if (it == objects_.end()) return std::nullopt;
  const auto p = it->second.parameters.find(name);
  if (p == it->second.parameters.end()) return std::nullopt;
  return p->second;
}

std::vector<std::string> ModuleRegistry::statistic_paths() const {
  std::vector<std::string> out;
  for (const auto& [object, entry] : objects_)
    for (const auto& [name, read] : entry.statistics) out.push_back(object + "." + name);
  return out;
}

double ModuleRegistry::sum(const std::string& scope, const std::string& name) const {
  double total = 0;
  for (const auto& [object, entry] : objects_) {
    if (!scope.empty() && object != scope && object.compare(0, scope.size() + 1, scope + ".") != 0) continue;
    const auto s = entry.statistics.find(name);
    if (s != entry.statistics.end()) total += s->second();
  }
  return total;
}

}  // namespace ks::tree
