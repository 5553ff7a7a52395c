// `kernelsight compare`: a measured serving benchmark (`vllm bench serve --save-result` JSON, or
// an SGLang `bench_serving --output-file` JSONL line) beside the simulator's prediction for the
// same scenario: one row per metric both report, with the relative error.
#include <fstream>
#include <iostream>
#include <sstream>

#include "app/cli_options.hpp"
#include "app/commands.hpp"
#include "app/measured_results.hpp"
#include "app/simulation.hpp"
#include "serving/metrics.hpp"

namespace po = boost::program_options;

namespace ks::app {
namespace {

nlohmann::json read_summary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config::ConfigError({path}, "", "cannot read file");
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw config::ConfigError({path}, "", "expected a summary.json written by `kernelsight run` (a JSON object)");
  return j;
}

}  // namespace

int cmd_compare(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight compare SCENARIO.yaml --measured FILE [--set key=value]...\n"
      "kernelsight compare --predicted SUMMARY.json --measured FILE\n\n"
      "Simulates the scenario (as `run`, writing no files) and prints measured vs predicted vs error\n"
      "= (predicted - measured) / measured for every metric both report: completed, duration,\n"
      "request / output / total token throughput, mean / median / p90 / p99 / std of TTFT, TPOT, ITL\n"
      "and E2EL. FILE is the JSON `vllm bench serve --save-result` writes, or the JSON lines SGLang's\n"
      "`bench_serving --output-file` appends (the last line unless --line). With --predicted, the\n"
      "summary.json of an earlier run replaces the simulation.\n\noptions");
  std::vector<std::string> overrides;
  std::string scenario_path, measured_path, predicted_path;
  int line = 0;
  opts.add_options()("help,h", "show this help")("measured,m", po::value(&measured_path),
                                                 "benchmark result: vllm bench serve JSON or SGLang JSONL")(
      "line", po::value(&line), "which line of a JSON-lines file (1-based; default: the last)")(
      "predicted", po::value(&predicted_path), "summary.json of an earlier `kernelsight run` instead of simulating")(
      "set,s", po::value(&overrides)->composing(), "override a scenario value (repeatable)");
  po::variables_map vm;
  if (const int rc = parse_options_with_file("compare", args, opts, vm, "scenario", scenario_path); rc >= 0) return rc;
  if (measured_path.empty()) {
    std::cerr << "kernelsight compare: --measured FILE is required\n\n" << opts;
    return kExitBadInput;
  }
  if (scenario_path.empty() == predicted_path.empty()) {
    std::cerr << "kernelsight compare: give a scenario to simulate or --predicted SUMMARY.json (one of them)\n\n"
              << opts;
    return kExitBadInput;
  }
  if (line < 0) {
    std::cerr << "kernelsight compare: --line must be >= 1\n";
    return kExitBadInput;
  }
  return run_reporting_errors([&] {
    const MeasuredResult measured = read_measured_result(measured_path, line);  // bad input before simulating
    std::map<std::string, double> predicted;
    std::string what;
    if (!predicted_path.empty()) {
      predicted = summary_metrics(read_summary(predicted_path));
      what = predicted_path;
    } else {
      config::Document scenario = config::Document::load_file(scenario_path);
      for (const auto& assignment : overrides) scenario.apply_override(assignment);
      Simulation sim(scenario);
      sim.run();
      predicted = summary_metrics(serving::to_json(sim.summary()));
      what = scenario_path + " (scenario '" + sim.name() + "', simulated)";
    }
    const std::vector<ComparisonRow> rows = compare_metrics(measured.metrics, predicted);
    std::cout << "measured:  " << measured.where << " (" << measured.format << ")\n"
              << "predicted: " << what << "\n\n";
    if (rows.empty()) {
      std::cerr << "error: " << measured.where << ": no metric in common with the prediction\n";
      return kExitBadInput;
    }
    std::cout << format_comparison(rows);
    const auto m = measured.metrics.find("completed");
    const auto p = predicted.find("completed");
    if (m != measured.metrics.end() && p != predicted.end() && m->second != p->second)
      std::cout << "note: the measured run completed " << m->second << " requests, the prediction " << p->second
                << ": does the scenario describe the measured workload (num_requests, rate, lengths)?\n";
    return kExitOk;
  });
}

}  // namespace ks::app
