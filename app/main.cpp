// kernelsight: the command-line entry point. SystemC owns main(); sc_main dispatches subcommands.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <systemc>  // declares sc_main extern "C"

#include "app/commands.hpp"
#include "app/plugins.hpp"
#include "app/version.hpp"  // generated from app/version.hpp.in
#include "sc_modules/sim/kernel_setup.hpp"

namespace {

void print_version(std::ostream& out) {
  out << "kernelsight " << ks::app::kVersion;
  if (*ks::app::kGitCommit != '\0') out << " (git " << ks::app::kGitCommit << ")";
  out << "\n";
}

void print_usage(std::ostream& out) {
  out << "usage: kernelsight <command> [options]\n\n"
         "commands:\n"
         "  run SCENARIO.yaml [--set key=value]... [--out DIR]   simulate a serving scenario\n"
         "  check SCENARIO.yaml [--set key=value]...             check a scenario, print what it resolves to\n"
         "  compare SCENARIO.yaml --measured FILE.json           measured (vllm bench / SGLang) vs predicted\n"
         "  sweep SWEEP.yaml [-j N] [--out DIR] [--emit slurm]   runs over a grid/list of overrides -> sweep.csv\n"
         "  merge DIR                                            gather a (Slurm) sweep's points into sweep.csv\n"
         "  capacity SCENARIO.yaml --slo S --find rate|replicas  highest rate / fewest replicas meeting SLOs\n"
         "  list                                                 registered kinds, models and GPUs\n"
         "  describe KIND                                        parameters of a kind (e.g. poisson, gpu.catalog)\n"
         "  import (--vidur DIR --gpu G | --gemm-table F) -o S   measurements -> sweep CSV\n"
         "  calibrate --gpu G --sweep S... -o CAL.yaml           fit the kernel model to a GPU (target tier)\n"
         "  validate --gpu G --tier T (--vidur DIR|--sweep S)    per-kernel error of a tier vs roofline\n"
         "  kernels --gpu G --tier T --in K.csv --out P.csv      predict kernel times\n"
         "  collective --topology T --kind K --gpus N --bytes B  predicted time of one collective\n"
         "  validate-collectives [--out FILE.md]                 measured vs predicted collectives\n"
         "  fit-host [--measurements a100|a40|F.csv]...          fit host CPU overheads, leave-one-model-out error\n"
         "  step --model M --gpu G --decode N --context C         every kernel of one step, priced, as CSV\n"
         "  version                                              version and git commit (also --version)\n\n"
         "Every command takes --plugin LIB.so (repeatable): a shared library registering more kinds.\n"
         "`kernelsight <command> --help` describes each command.\n";
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  ks::sim::setup_kernel();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(std::cerr);
    return ks::app::kExitBadInput;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  if (command == "--version" || command == "-V" || command == "version") {
    print_version(std::cout);
    return ks::app::kExitOk;
  }
  try {
    ks::app::load_plugins(args);
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return ks::app::kExitBadInput;
  }
  if (command == "-h" || command == "--help" || command == "help") {
    print_usage(std::cout);
    return ks::app::kExitOk;
  }
  if (command == "run") return ks::app::cmd_run(args);
  if (command == "list") return ks::app::cmd_list(args);
  if (command == "describe") return ks::app::cmd_describe(args);
  if (command == "import") return ks::app::cmd_import(args);
  if (command == "calibrate") return ks::app::cmd_calibrate(args);
  if (command == "validate") return ks::app::cmd_validate(args);
  if (command == "kernels") return ks::app::cmd_kernels(args);
  if (command == "collective") return ks::app::cmd_collective(args);
  if (command == "validate-collectives") return ks::app::cmd_validate_collectives(args);
  if (command == "fit-host") return ks::app::cmd_fit_host(args);
  if (command == "step") return ks::app::cmd_step(args);
  if (command == "check") return ks::app::cmd_check(args);
  if (command == "compare") return ks::app::cmd_compare(args);
  if (command == "sweep") return ks::app::cmd_sweep(args);
  if (command == "sweep-task") return ks::app::cmd_sweep_task(args);
  if (command == "merge") return ks::app::cmd_merge(args);
  if (command == "capacity") return ks::app::cmd_capacity(args);
  std::cerr << "kernelsight: unknown command '" << command << "'\n\n";
  print_usage(std::cerr);
  return ks::app::kExitBadInput;
}
