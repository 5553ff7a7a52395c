// `kernelsight capacity`: the highest request rate, or the fewest replicas, that meets SLOs for a
// scenario, by search over simulated runs (app/capacity_search.hpp), each run in its own process.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/capacity_search.hpp"
#include "app/child_process.hpp"
#include "app/cli_options.hpp"
#include "app/commands.hpp"
#include "app/outputs.hpp"
#include "app/plugins.hpp"
#include "app/sweep_plan.hpp"
#include "base/config/units.hpp"
#include "base/util/atomic_file.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace ks::app {
namespace {

std::string fmt(const char* format, double v) { return format_number(format, v); }

// "8/s", "480/min" or a bare number (requests per second).
double parse_rate(const std::string& option, const std::string& text) {
  std::optional<double> rate = config::parse_quantity(text, config::Dim::Rate);
  if (!rate) {
    try {
      std::size_t used = 0;
      rate = std::stod(text, &used);
      if (used != text.size()) rate.reset();
    } catch (const std::exception&) {
    }
  }
  if (!rate || *rate <= 0)
    throw std::invalid_argument(option + " " + text + ": expected a positive request rate such as '8/s' or '8'");
  return *rate;
}

// Runs one probe of the scenario in a child process and judges its summary.json.
class Prober {
 public:
  Prober(std::string scenario, std::vector<std::string> overrides, std::string dir, serving::Slo slo,
         std::string statistic)
      : scenario_(std::move(scenario)), overrides_(std::move(overrides)), dir_(std::move(dir)), slo_(slo),
        statistic_(std::move(statistic)), binary_(self_executable()) {}

  Verdict run(const std::string& label, const std::string& assignment) {
    ++count_;
    const std::string pd = dir_ + "/probes/" + fmt("%02.0f", count_) + "-" + label;
    util::ensure_directory(pd);
    fs::remove(pd + "/summary.json");
    std::vector<std::string> args = {"run", scenario_, "--quiet", "--out", pd};
    for (const auto& p : loaded_plugins()) args.insert(args.end(), {"--plugin", p});
    for (const auto& o : overrides_) args.insert(args.end(), {"--set", o});
    args.insert(args.end(), {"--set", assignment});
    const int status = wait_child(spawn_logged(binary_, args, pd + "/run.log"));
    if (!exited_ok(status)) {
      const std::string why = "the run with --set " + assignment + " failed: " + first_error_line(pd + "/run.log", status);
      if (exit_code(status) == kExitBadInput) throw std::invalid_argument(why);
      throw std::runtime_error(why);
    }
    std::ifstream in(pd + "/summary.json");
    last_summary_ = nlohmann::json::parse(in, nullptr, false);
    if (!last_summary_.is_object()) throw std::runtime_error("no readable summary.json in " + pd);
    return judge(last_summary_, slo_, statistic_);
  }
  const nlohmann::json& last_summary() const { return last_summary_; }
  int count() const { return static_cast<int>(count_); }

 private:
  std::string scenario_;
  std::vector<std::string> overrides_;
  std::string dir_;
  serving::Slo slo_;
  std::string statistic_;
  std::string binary_;
  double count_ = 0;
  nlohmann::json last_summary_;
};

std::string slo_text(const serving::Slo& slo, const std::string& stat) {
  std::string s;
  if (slo.ttft_s > 0) s += stat + " TTFT <= " + fmt("%g", slo.ttft_s * 1e3) + " ms";
  if (slo.tpot_s > 0) s += (s.empty() ? "" : ", ") + stat + " TPOT <= " + fmt("%g", slo.tpot_s * 1e3) + " ms";
  if (slo.e2el_s > 0) s += (s.empty() ? "" : ", ") + stat + " E2EL <= " + fmt("%g", slo.e2el_s * 1e3) + " ms";
  return s + ", every request completed";
}

}  // namespace

int cmd_capacity(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight capacity SCENARIO.yaml --slo ttft=2s,tpot=50ms --find rate|replicas [options]\n\n"
      "Searches simulated runs of the scenario (each in its own process) for the highest request rate\n"
      "(--find rate: sets workload.rate) or the fewest replicas (--find replicas: sets `replicas`, at the\n"
      "scenario's rate; GPUs = replicas x parallel.tp) that MEET the SLOs: every request completed and\n"
      "the chosen statistic (--percentile) of each limited metric at or under its limit. Prints every\n"
      "probe and the answer; writes DIR/capacity.csv and DIR/probes/NN-VALUE/ (the run outputs).\n\noptions");
  std::string scenario_path, slo_arg, statistic = "p99", find, min_text, max_text, out_dir;
  double tolerance = 0.05;
  std::vector<std::string> overrides;
  opts.add_options()("help,h", "show this help")(
      "slo", po::value(&slo_arg), "limits, e.g. ttft=2s,tpot=50ms,e2el=30s (bare numbers: ms); required")(
      "percentile", po::value(&statistic)->default_value(statistic), "statistic compared with the limits: p99, p90, median, mean")(
      "find", po::value(&find), "`rate` (highest request rate) or `replicas` (fewest replicas); required")(
      "min", po::value(&min_text), "rate: lowest rate to consider, where the search starts (e.g. 4/s; default: start at 1/s)")(
      "max", po::value(&max_text), "rate: highest rate to try (default: 1024x the start); replicas: most replicas (default 64)")(
      "tolerance", po::value(&tolerance)->default_value(tolerance),
      "rate: stop when the failing rate is within this fraction above the answer")(
      "set,s", po::value(&overrides)->composing(), "override a scenario value for every probe (repeatable)")(
      "out,o", po::value(&out_dir), "output folder (default: results/<scenario file name>-capacity)");
  po::variables_map vm;
  if (const int rc = parse_options_with_file("capacity", args, opts, vm, "scenario", scenario_path); rc >= 0) return rc;
  auto usage_error = [&](const std::string& what) {
    std::cerr << "kernelsight capacity: " << what << "\n\n" << opts;
    return kExitBadInput;
  };
  if (scenario_path.empty()) return usage_error("no scenario file given");
  if (slo_arg.empty()) return usage_error("--slo is required, e.g. --slo ttft=2s,tpot=50ms");
  if (find != "rate" && find != "replicas")
    return usage_error(find.empty() ? "--find is required: rate or replicas" : "--find " + find + ": expected rate or replicas");
  if (find == "replicas" && (!min_text.empty() || !vm["tolerance"].defaulted()))
    return usage_error("--min and --tolerance apply to --find rate only");

  return run_reporting_errors([&] {
    const serving::Slo slo = parse_slo(slo_arg);
    judge(nlohmann::json::object(), slo, statistic);  // rejects an unknown --percentile before any run
    if (!fs::is_regular_file(scenario_path)) throw config::ConfigError({scenario_path}, "", "no such scenario file");
    const std::string dir = out_dir.empty() ? "results/" + fs::path(scenario_path).stem().string() + "-capacity" : out_dir;
    util::ensure_directory(dir);
    Prober prober(scenario_path, overrides, dir, slo, statistic);

    const std::string value_column = find == "rate" ? "rate_per_s" : "replicas";
    std::string csv = "probe," + value_column + ",meets,completed,submitted," + statistic + "_ttft_ms," + statistic +
                      "_tpot_ms," + statistic + "_e2el_ms,request_throughput,tensor_parallel,why\n";
    int tp = 1;
    auto record = [&](const std::string& value, const Verdict& v) {
      if (prober.count() == 1)  // options are all checked by now
        std::printf("capacity of %s: %s\n", scenario_path.c_str(), slo_text(slo, statistic).c_str());
      tp = prober.last_summary().value("tensor_parallel", 1);
      const double throughput = prober.last_summary().value("request_throughput", 0.0);
      std::printf("probe %2d: %-10s %s TTFT %9.1f ms  TPOT %7.2f ms  E2EL %9.1f ms  throughput %6.2f req/s  %s\n",
                  prober.count(), (find == "rate" ? value + "/s" : value + " repl").c_str(), statistic.c_str(),
                  v.ttft_ms, v.tpot_ms, v.e2el_ms, throughput, v.meets ? "MEETS" : ("misses: " + v.why).c_str());
      std::fflush(stdout);
      csv += std::to_string(prober.count()) + "," + value + "," + (v.meets ? "true" : "false") + "," +
             std::to_string(v.completed) + "," + std::to_string(v.submitted) + "," + fmt("%.6f", v.ttft_ms) + "," +
             fmt("%.6f", v.tpot_ms) + "," + fmt("%.6f", v.e2el_ms) + "," + fmt("%.6f", throughput) + "," +
             std::to_string(tp) + "," + csv_field(v.why) + "\n";
      util::write_file_atomically(dir + "/capacity.csv", csv);
      return v.meets;
    };

    if (find == "rate") {
      RateSearch search;
      if (!min_text.empty()) search.min = parse_rate("--min", min_text);
      if (!max_text.empty()) search.max = parse_rate("--max", max_text);
      search.tolerance = tolerance;
      const SearchResult r = search_rate(search, [&](double rate) {
        const std::string value = fmt("%.6g", rate);
        return record(value, prober.run("rate-" + value, "workload.rate=" + value + "/s"));
      });
      double failed_above = 0;
      for (const Probe& p : r.probes)
        if (!p.meets && p.value > r.answer && (failed_above == 0 || p.value < failed_above)) failed_above = p.value;
      std::printf("answer: %s req/s", fmt("%.6g", r.answer).c_str());
      if (r.at_limit) std::printf(" (meets the SLOs at the search's upper limit: raise --max to look higher)\n");
      else std::printf(" (%s req/s missed; tolerance %g)\n", fmt("%.6g", failed_above).c_str(), tolerance);
    } else {
      int max = 64;
      if (!max_text.empty()) {
        std::size_t used = 0;
        try {
          max = std::stoi(max_text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != max_text.size() || max < 1)
          throw std::invalid_argument("--max " + max_text + ": expected a whole number of replicas, at least 1");
      }
      const SearchResult r = search_replicas(max, [&](int n) {
        return record(std::to_string(n), prober.run("replicas-" + std::to_string(n), "replicas=" + std::to_string(n)));
      });
      const int n = static_cast<int>(r.answer);
      std::printf("answer: %d replica%s (%d GPUs at tp=%d)", n, n > 1 ? "s" : "", n * tp, tp);
      if (n > 1) std::printf("; %d missed\n", n - 1);
      else std::printf("\n");
    }
    std::printf("%d probes; %s/capacity.csv\n", prober.count(), dir.c_str());
    return kExitOk;
  });
}

}  // namespace ks::app
