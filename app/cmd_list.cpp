// `kernelsight list`: what can be named in a scenario.
#include <iostream>

#include "app/commands.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/model_config.hpp"
#include "base/registry/registry.hpp"

namespace ks::app {

int cmd_list(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << "kernelsight list\n\nLists the registered kinds of every category (the values of `kind:` in a\n"
                 "scenario), the model presets and the GPUs of the catalog.\n";
    return kExitOk;
  }
  if (!args.empty()) {
    std::cerr << "kernelsight list: unexpected argument '" << args[0] << "'\n";
    return kExitBadInput;
  }
  for (const auto& [category, reg] : registry::all_registries()) {
    std::cout << category << ":\n";
    for (const auto& info : reg->kinds()) {
      std::string line = "  " + info.kind;
      if (line.size() < 24) line.resize(24, ' ');
      std::cout << line << " " << info.doc << "\n";
    }
  }
  std::cout << "models:\n";
  for (const auto& name : kernels::builtin_model_names()) std::cout << "  " << name << "\n";
  std::cout << "gpus:\n";
  for (const auto& name : kernels::builtin_gpu_names()) std::cout << "  " << name << "\n";
  return kExitOk;
}

}  // namespace ks::app
