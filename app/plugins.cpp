#include "app/plugins.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

namespace ks::app {
namespace {
std::vector<std::string>& loaded() {
  static std::vector<std::string> paths;
  return paths;
}

void load(const std::string& path) {
  // RTLD_GLOBAL: a plug-in's own dependencies may be plug-ins too. The executable exports its
  // symbols (ENABLE_EXPORTS), so the plug-in's registrations land in our registries.
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* why = dlerror();
    throw std::invalid_argument("cannot load plug-in '" + path + "': " + (why ? why : "unknown error"));
  }
  // A bare name is found by the loader's search path: pass it on as given.
  loaded().push_back(path.find('/') == std::string::npos ? path : std::filesystem::absolute(path).string());
}
}  // namespace

void load_plugins(std::vector<std::string>& args) {
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--plugin") {
      if (i + 1 == args.size()) throw std::invalid_argument("--plugin needs a shared library path");
      load(args[++i]);
    } else if (a.rfind("--plugin=", 0) == 0) {
      load(a.substr(9));
    } else {
      rest.push_back(a);
    }
  }
  args.swap(rest);
}

const std::vector<std::string>& loaded_plugins() { return loaded(); }

}  // namespace ks::app
