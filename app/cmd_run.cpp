// `kernelsight run`: simulate one scenario and write its results.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <tuple>
#include <iostream>

#include <unistd.h>

#include <boost/program_options.hpp>

#include "app/cli_options.hpp"
#include "app/commands.hpp"
#include "app/interrupt.hpp"
#include "app/outputs.hpp"
#include "app/prediction_intervals.hpp"
#include "app/child_process.hpp"
#include "app/progress_bar.hpp"
#include "app/simulation.hpp"
#include "base/config/error.hpp"
#include "base/util/atomic_file.hpp"

namespace po = boost::program_options;

namespace ks::app {
namespace {

std::string trace_dir(const std::string& trace_path) {
  const std::string parent = std::filesystem::path(trace_path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts("kernelsight run SCENARIO.yaml [options]\n\n"
                               "Simulates the scenario, prints the `vllm bench serve` metrics and writes\n"
                               "summary.json, requests.csv, kernels.csv and config.resolved.yaml to the\n"
                               "output folder; with --trace, a Perfetto / Chrome timeline (open it in\n"
                               "ui.perfetto.dev or chrome://tracing). A progress bar goes to stderr when it\n"
                               "is a terminal.\n\noptions");
  std::string slo_text;
  std::vector<std::string> overrides;
  std::string out_dir;
  std::string scenario_path;
  bool quiet = false;
  std::string trace_path;
  util::TraceOptions trace_options;
  bool exact = false;
  int intervals = 0;
  int jobs = 0;
  std::string uncertainty_path;
  opts.add_options()("help,h", "show this help")(
      "set,s", po::value(&overrides)->composing(),
      "override a scenario value: --set workload.rate=8/s (repeatable)")(
      "out,o", po::value(&out_dir), "output folder (default: output.dir, else results/<name>)")(
      "quiet,q", po::bool_switch(&quiet), "do not print the metrics table")(
      "exact", po::bool_switch(&exact),
      "disable every simulation shortcut (one TLM transaction per kernel, no kernel-cost memo): the "
      "reference the fast path must match (docs/performance.md)")(
      "slo", po::value(&slo_text), "goodput SLOs, e.g. ttft=200ms,tpot=50ms (bare numbers: ms)")(
      "trace", po::value(&trace_path), "write a Perfetto / Chrome trace-event timeline to this file")(
      "trace-limit", po::value(&trace_options.limit)->default_value(trace_options.limit),
      "keep at most this many trace events; later ones are dropped and the file says so")(
      "trace-kernel-steps", po::value(&trace_options.kernel_steps)->default_value(trace_options.kernel_steps),
      "engine steps traced kernel by kernel; later steps get one event per step and stream")(
      "intervals", po::value(&intervals)->default_value(0),
      "also run N samples of the kernel model's error (per-class multipliers from its validation) and "
      "report 90% prediction intervals of TTFT, TPOT, ITL, E2EL and throughput (e.g. --intervals 20)")(
      "uncertainty", po::value(&uncertainty_path),
      "kernel-model residual quantiles for --intervals (default: the shipped "
      "data/calibration/uncertainty.yaml; format in docs/kernel-model.md)")(
      "jobs,j", po::value(&jobs)->default_value(0), "parallel processes for --intervals (default: all cores)");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value(&scenario_path));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description positional;
  positional.add("scenario", 1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "kernelsight run: " << e.what() << "\n\n" << opts;
    return kExitBadInput;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return kExitOk;
  }
  if (scenario_path.empty()) {
    std::cerr << "kernelsight run: no scenario file given\n\n" << opts;
    return kExitBadInput;
  }

  if (intervals < 0 || intervals == 1) {
    std::cerr << "kernelsight run: --intervals needs at least 2 samples (e.g. --intervals 20), got " << intervals
              << "\n";
    return kExitBadInput;
  }
  return run_reporting_errors([&] {
    config::Document scenario = config::Document::load_file(scenario_path);
    for (const auto& assignment : overrides) scenario.apply_override(assignment);
    if (exact)
      for (const char* assignment : kExactOverrides) scenario.apply_override(assignment);
    const serving::Slo slo = slo_text.empty() ? serving::Slo{} : parse_slo(slo_text);
    Simulation sim(scenario);
    const std::string dir = out_dir.empty() ? sim.output_dir() : out_dir;
    util::ensure_directory(dir);  // fail before simulating, not after
    if (!trace_path.empty()) sim.enable_trace(trace_options);

    if (!trace_path.empty()) util::ensure_directory(trace_dir(trace_path));

    const auto wall_start = std::chrono::steady_clock::now();
    catch_stop_signals();
    std::optional<ProgressBar> bar;
    if (!quiet && ::isatty(STDERR_FILENO)) bar.emplace(stderr);
    const bool complete = run_in_slices(sim, bar ? &*bar : nullptr, [] { return stop_signal() != 0; });
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

    const serving::BenchmarkSummary summary = sim.summary();
    nlohmann::json report = sim.report();
    add_goodput(report, sim, slo);
    if (!complete) {  // interrupted: the results so far, marked as such
      report["partial"] = true;
      report["simulated_until_s"] = sim.now_seconds();
    }
    if (complete && intervals > 0) {
      IntervalRequest request;
      request.scenario_path = scenario_path;
      request.overrides = overrides;
      if (exact) request.overrides.insert(request.overrides.end(), std::begin(kExactOverrides), std::end(kExactOverrides));
      std::tie(request.tier, request.user_scales) = scenario_kernel_tier(scenario.resolved_yaml());
      request.work_dir = dir + "/intervals";
      request.samples = intervals;
      request.jobs = jobs > 0 ? jobs : available_cores();
      request.seed = report.value("seed", std::uint64_t{0});
      const std::string upath =
          uncertainty_path.empty() ? kernels::KernelUncertainty::shipped_path() : uncertainty_path;
      const kernels::KernelUncertainty u =
          uncertainty_path.empty() ? kernels::KernelUncertainty::shipped() : kernels::KernelUncertainty::load(upath);
      report["intervals"] = run_intervals(request, u, upath);
    }
    util::write_file_atomically(dir + "/summary.json", report.dump(2) + "\n");
    util::write_file_atomically(dir + "/requests.csv", requests_csv(sim));
    util::write_file_atomically(dir + "/kernels.csv", kernels_csv(sim));
    util::write_file_atomically(dir + "/config.resolved.yaml", scenario.resolved_yaml() + "\n");
    if (!trace_path.empty()) {
      util::write_file_atomically(trace_path, sim.trace_json());
      const util::TraceRecorder& trace = *sim.trace();
      std::fprintf(stderr, "trace: %llu events in %s", static_cast<unsigned long long>(trace.events()),
                   trace_path.c_str());
      if (trace.truncated())
        std::fprintf(stderr, " (TRUNCATED at --trace-limit %llu: %s)", static_cast<unsigned long long>(trace_options.limit),
                     trace.truncation_note().c_str());
      std::fprintf(stderr, "; open it in ui.perfetto.dev or chrome://tracing\n");
    }
    if (!quiet) {
      std::cout << serving::format_table(summary);
      if (report.contains("intervals")) std::cout << format_intervals(report["intervals"]);
      if (slo.any()) std::printf("%-40s %-10.2f\n", "Request goodput (req/s):", report["request_goodput"].get<double>());
    }
    std::fprintf(stderr, "simulated %.3f s in %.3f s wall (%llu steps, %llu kernels); results in %s/\n",
                 summary.duration_s, wall, static_cast<unsigned long long>(sim.total_steps()),
                 static_cast<unsigned long long>(sim.total_kernels()), dir.c_str());
    if (complete) return kExitOk;
    std::fprintf(stderr,
                 "interrupted by %s at simulated %.3f s: PARTIAL results (%lld requests finished) in %s/ "
                 "(summary.json has \"partial\": true)\n",
                 signal_name(stop_signal()), sim.now_seconds(), static_cast<long long>(sim.completed()), dir.c_str());
    return 128 + stop_signal();
  });
}

}  // namespace ks::app
