#pragma once
// External plug-ins: shared libraries whose static initialisers register new kinds (GPU, host,
// scheduler, ...) in the same registries the built-in kinds use. `--plugin lib.so` on any command.
#include <string>
#include <vector>

namespace ks::app {

// Loads every `--plugin PATH` / `--plugin=PATH` in args and removes them from args. Throws
// std::invalid_argument naming the library and the loader's reason when one cannot be loaded.
void load_plugins(std::vector<std::string>& args);

// The plug-ins loaded so far (absolute paths), for commands that re-run this binary (sweep, capacity).
const std::vector<std::string>& loaded_plugins();

}  // namespace ks::app
