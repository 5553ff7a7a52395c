// `kernelsight fit-host`: fits the `fitted` engine overheads (hardware.host.kind: fitted) to measured CPU overheads and reports the
// coefficients, the in-sample error and the error when each model is left out of the fit.
#include <cstdio>
#include <iostream>

#include <boost/program_options.hpp>

#include "app/commands.hpp"
#include "serving/host_overhead_model.hpp"
#include "base/util/csv.hpp"
#include "base/util/data_dir.hpp"

namespace po = boost::program_options;

namespace ks::app {
namespace {

void print_errors(const char* label, const serving::FitErrors& e) {
  std::printf("| %-22s |", label);
  for (double m : e.phase_mape) std::printf(" %5.1f%% |", 100 * m);
  std::printf(" %5.1f%% | %5.1f%% | %5.1f%% |\n", 100 * e.total_mape, 100 * e.total_median_ape,
              100 * e.total_max_ape);
}

}  // namespace

int cmd_fit_host(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight fit-host [--measurements NAME|PATH ...]\n\n"
      "Fits t = a + b*batch_size + (c + d*batch_size)*f(TP) per host phase by least squares, as the\n"
      "`fitted` host kind does, and prints the coefficients, the in-sample error and the leave-one-model-out error of\n"
      "each TP term (mean absolute percentage error per phase and of the step total).\n\noptions");
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")(
      "measurements,m", po::value(&sets)->composing(),
      "a100 | a40 (data/cpu_overheads/) or a CSV path in that format; repeatable (default: a100 and a40)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "kernelsight fit-host: " << e.what() << "\n\n" << opts;
    return kExitBadInput;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return kExitOk;
  }
  if (sets.empty()) sets = {"a100", "a40"};
  for (const std::string& set : sets) {
    const std::string path =
        set.find('/') != std::string::npos ? set : kernels::data_dir() + "/cpu_overheads/" + set + ".csv";
    std::vector<serving::HostOverheadSample> samples;
    try {
      samples = serving::read_host_overheads(path);
    } catch (const std::exception& e) {
      std::cerr << "kernelsight fit-host: " << e.what() << "\n";
      return kExitBadInput;
    }
    std::printf("## %s (%zu samples)\n\n", set.c_str(), samples.size());
    // The `fitted` host's default TP term: the lowest leave-one-model-out error on the A100 set.
    const serving::HostOverheadModel model = serving::fit_host_overheads(samples, serving::TpTerm::Distributed);
    std::printf("Coefficients of t = a + b*batch_size + (c + d*batch_size)*[tp>1] (the `fitted` host's default),\n"
                "microseconds:\n\n");
    std::printf("| phase | a | b (per sequence) | c (TP > 1) | d (per sequence, TP > 1) |\n|---|---|---|---|---|\n");
    for (std::size_t p = 0; p < serving::kHostPhases; ++p) {
      const auto& c = model.phases[p];
      std::printf("| %s | %.1f | %.3f | %.1f | %.3f |\n", serving::host_phase_name(static_cast<serving::HostPhase>(p)),
                  c.base_s * 1e6, c.per_seq_s * 1e6, c.tp_s * 1e6, c.per_seq_tp_s * 1e6);
    }
    std::printf("\nMean absolute percentage error (total: mean / median / max):\n\n");
    std::printf("| fit | schedule | prepare | sampler | process | total | median | max |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    print_errors("in-sample, [tp>1]", serving::fit_errors(model, samples));
    for (serving::TpTerm term : {serving::TpTerm::Distributed, serving::TpTerm::Log2, serving::TpTerm::Linear}) {
      const std::string label = std::string("leave-model-out, ") + serving::tp_term_name(term);
      print_errors(label.c_str(), serving::leave_one_model_out(samples, term));
    }
    std::printf("\n");
  }
  return kExitOk;
}

}  // namespace ks::app
