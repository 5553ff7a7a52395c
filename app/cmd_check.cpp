// `kernelsight check`: reads a scenario with its overrides and elaborates it without simulating,
// so every key, value and combination is checked (what `sweep` runs for each point before it
// simulates any).
#include <iostream>

#include "app/cli_options.hpp"
#include "app/commands.hpp"
#include "app/simulation.hpp"

namespace po = boost::program_options;

namespace ks::app {

int cmd_check(const std::vector<std::string>& args) {
  po::options_description opts("kernelsight check SCENARIO.yaml [--set key=value]...\n\n"
                               "Checks a scenario and its overrides as `run` would (unknown keys, values,\n"
                               "units, kinds, whether the model fits) without simulating it.\n\noptions");
  std::vector<std::string> overrides;
  std::string scenario_path;
  opts.add_options()("help,h", "show this help")("set,s", po::value(&overrides)->composing(),
                                                 "override a scenario value (repeatable)");
  po::variables_map vm;
  if (const int rc = parse_options_with_file("check", args, opts, vm, "scenario", scenario_path); rc >= 0) return rc;
  if (scenario_path.empty()) {
    std::cerr << "kernelsight check: no scenario file given\n\n" << opts;
    return kExitBadInput;
  }
  return run_reporting_errors([&] {
    config::Document scenario = config::Document::load_file(scenario_path);
    for (const auto& assignment : overrides) scenario.apply_override(assignment);
    const Simulation sim(scenario);
    std::cout << "ok: " << scenario_path << " (scenario '" << sim.name() << "')\n";
    return kExitOk;
  });
}

}  // namespace ks::app
