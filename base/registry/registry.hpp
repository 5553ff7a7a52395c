#pragma once
// Plug-in registries. Every swappable part (GPU, link, host, scheduler, router, workload ...) sits
// behind an interface; its implementations register under the YAML `kind:` with a doc line, a
// parameter schema and a factory. Registration is done by static Registrar objects, so built-in
// kinds live in OBJECT libraries (a static archive would drop them) and plug-ins loaded with
// dlopen register themselves the same way.
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/config/error.hpp"
#include "base/config/schema.hpp"

namespace ks::registry {

struct KindInfo {
  std::string category;  // "gpu", "host", "scheduler", ...
  std::string kind;      // the YAML `kind:` value
  std::string doc;
  const config::Schema* schema;
};

// The type-erased view used by `kernelsight list` and `describe`.
class RegistryBase {
 public:
  explicit RegistryBase(std::string category);
  virtual ~RegistryBase() = default;
  const std::string& category() const { return category_; }
  virtual std::vector<KindInfo> kinds() const = 0;

 private:
  std::string category_;
};

// All registries, by category name (sorted).
const std::map<std::string, RegistryBase*>& all_registries();
// Finds "kind" or "category.kind"; throws std::invalid_argument listing matches/known kinds.
KindInfo find_kind(const std::string& name);

template <class Interface, class... Args>
class Registry final : public RegistryBase {
 public:
  using Factory = std::function<std::unique_ptr<Interface>(Args...)>;
  struct Entry {
    std::string doc;
    config::Schema schema;
    Factory make;
  };

  // One registry per interface; `category` is the name users see.
  static Registry& instance(const char* category) {
    static Registry registry(category);
    return registry;
  }

  void add(const std::string& kind, Entry entry) {
    if (!entries_.emplace(kind, std::move(entry)).second)
      throw std::logic_error("kind '" + kind + "' registered twice in category '" + category() + "'");
  }

  bool has(const std::string& kind) const { return entries_.count(kind) != 0; }

  // Throws config::ConfigError at `mark` naming the registered kinds when `kind` is unknown.
  const Entry& get(const std::string& kind, const config::SourceMark& mark,
                   const std::string& key_path) const {
    auto it = entries_.find(kind);
    if (it == entries_.end()) {
      std::string known;
      for (const auto& [name, _] : entries_) known += (known.empty() ? "" : ", ") + name;
      throw config::ConfigError(mark, key_path,
                                "unknown " + category() + " kind '" + kind + "' (registered kinds: " +
                                    (known.empty() ? "none" : known) + ")");
    }
    return it->second;
  }

  std::vector<KindInfo> kinds() const override {
    std::vector<KindInfo> out;
    for (const auto& [name, entry] : entries_) out.push_back({category(), name, entry.doc, &entry.schema});
    return out;
  }

 private:
  explicit Registry(const char* category) : RegistryBase(category) {}
  std::map<std::string, Entry> entries_;
};

}  // namespace ks::registry
