// `kernelsight capacity`: the highest request rate, or the fewest replicas, that meets SLOs for a
// scenario, by search over simulated runs (app/capacity_search.hpp), each run in its own process.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "app/capacity_search.hpp"
#include "app/child_process.hpp"
#include "app/prediction_intervals.hpp"
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

// A positive factor ("2", "2x").
double parse_speedup(const std::string& option, const std::string& text) {
  std::string t = text;
  if (!t.empty() && (t.back() == 'x' || t.back() == 'X')) t.pop_back();
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != t.size() || !(v > 0))
    throw std::invalid_argument(option + " " + text + ": expected a positive speed-up factor such as '2' or '2x'");
  return v;
}

// What one probe found: the verdict over its seeds and each seed's run.
struct ProbeResult {
  ProbeVerdict verdict;
  std::vector<SeedRun> runs;
  std::int64_t num_requests = 0;  // requests per run (after lengthening)
  int tensor_parallel = 1, gpus = 0, nodes = 0;
};

// The topology a probe ran on, from its config.resolved.yaml (0: not known).
struct Placement {
  int replicas = 1, tp = 1, pp = 1, nodes = 0, gpus_per_node = 0;
  // Nodes the replicas occupy (0: not known).
  int nodes_used() const {
    return gpus_per_node > 0 ? (replicas * tp * pp + gpus_per_node - 1) / gpus_per_node : 0;
  }
};

Placement read_placement(const std::string& resolved_yaml) {
  Placement p;
  try {
    const YAML::Node root = YAML::LoadFile(resolved_yaml);
    if (root["replicas"]) p.replicas = root["replicas"].as<int>();
    if (const YAML::Node par = root["parallel"]) {
      if (par["tp"]) p.tp = par["tp"].as<int>();
      if (par["pp"]) p.pp = par["pp"].as<int>();
    }
    if (const YAML::Node topo = root["hardware"]["topology"]) {
      if (topo["nodes"]) p.nodes = topo["nodes"].as<int>();
      if (topo["gpus_per_node"]) p.gpus_per_node = topo["gpus_per_node"].as<int>();
    }
  } catch (const std::exception&) {
  }
  return p;
}

// Runs one probe of the scenario over its seeds (child processes, `jobs` at a time), lengthens the
// runs until each reaches a steady state (or max_requests), and judges them.
class Prober {
 public:
  struct Options {
    int seeds = 3;
    int jobs = 1;
    double margin = 0.05;
    std::int64_t max_requests = 16000;
  };
  Prober(std::string scenario, std::vector<std::string> overrides, std::string dir, serving::Slo slo,
         std::string statistic, Options options)
      : scenario_(std::move(scenario)), overrides_(std::move(overrides)), dir_(std::move(dir)), slo_(slo),
        statistic_(std::move(statistic)), options_(options), binary_(self_executable()) {}

  ProbeResult run(const std::string& label, const std::vector<std::string>& assignments) {
    ++count_;
    const std::string pd = dir_ + "/probes/" + fmt("%02.0f", count_) + "-" + label;
    ProbeResult result;
    std::int64_t length = 0;  // 0: the scenario's own num_requests
    for (;;) {
      result.runs = run_seeds(pd, assignments, length);
      result.verdict = judge_probe(result.runs, slo_, statistic_, options_.margin);
      std::int64_t longest = 0;
      bool grown_unstable = false, short_run = false;
      for (const SeedRun& r : result.runs) {
        longest = std::max(longest, r.submitted);
        grown_unstable = grown_unstable || (r.steady.long_enough && !r.steady.stable);
        short_run = short_run || !r.steady.long_enough;
      }
      result.num_requests = longest;
      // A queue that grows over a long enough window is evidence enough; a run that is short is run
      // again twice as long (a trace that has no more requests stops growing: judge it as is).
      if (grown_unstable || !short_run || longest * 2 > options_.max_requests ||
          (length > 0 && longest < length)) break;
      length = longest * 2;
    }
    for (SeedRun& r : result.runs)
      if (!r.steady.long_enough && r.steady.stable && r.completed == r.submitted)
        r.why += " (runs stop at --max-requests " + std::to_string(options_.max_requests) + ")";
    if (!result.verdict.long_enough && result.verdict.why.find("too short") != std::string::npos)
      result.verdict.why += " (runs stop at --max-requests " + std::to_string(options_.max_requests) + ")";
    const Placement placement = read_placement(pd + "/seed-" + std::to_string(first_seed()) + "/config.resolved.yaml");
    result.tensor_parallel = placement.tp;
    result.nodes = placement.nodes_used();
    result.gpus = placement.replicas * placement.tp * placement.pp;
    last_placement_ = placement;
    return result;
  }
  int count() const { return static_cast<int>(count_); }
  const Placement& last_placement() const { return last_placement_; }
  static int first_seed() { return 1; }

 private:
  std::vector<SeedRun> run_seeds(const std::string& pd, const std::vector<std::string>& assignments, std::int64_t length) {
    const std::size_t n = static_cast<std::size_t>(options_.seeds);
    std::vector<std::string> errors(n);
    std::vector<int> codes(n, 0);
    auto seed_dir = [&](std::size_t i) { return pd + "/seed-" + std::to_string(first_seed() + static_cast<int>(i)); };
    run_parallel(
        n, options_.jobs,
        [&](std::size_t i) {
          const std::string sd = seed_dir(i);
          util::ensure_directory(sd);
          fs::remove(sd + "/summary.json");
          std::vector<std::string> args = {"run", scenario_, "--quiet", "--out", sd};
          for (const auto& p : loaded_plugins()) args.insert(args.end(), {"--plugin", p});
          for (const auto& o : overrides_) args.insert(args.end(), {"--set", o});
          for (const auto& a : assignments) args.insert(args.end(), {"--set", a});
          args.insert(args.end(), {"--set", "seed=" + std::to_string(first_seed() + static_cast<int>(i))});
          if (length > 0) args.insert(args.end(), {"--set", "workload.num_requests=" + std::to_string(length)});
          return spawn_logged(binary_, args, sd + "/run.log");
        },
        [&](std::size_t i, int status) {
          if (exited_ok(status)) return;
          codes[i] = exit_code(status);
          errors[i] = first_error_line(seed_dir(i) + "/run.log", status);
        });
    std::string joined;
    for (const auto& a : assignments) joined += (joined.empty() ? "" : " ") + std::string("--set ") + a;
    for (std::size_t i = 0; i < n; ++i) {
      if (errors[i].empty()) continue;
      std::string why = "the run with " + joined + " failed: " + errors[i];
      if (why.find("'workload.rate'") != std::string::npos && why.find("unknown key") != std::string::npos)
        why += " (a trace workload has no rate: use --find speedup)";
      if (codes[i] == kExitBadInput) throw std::invalid_argument(why);
      throw std::runtime_error(why);
    }
    std::vector<SeedRun> runs;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string sd = seed_dir(i);
      std::ifstream in(sd + "/summary.json");
      const nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
      if (!summary.is_object()) throw std::runtime_error("no readable summary.json in " + sd);
      SeedRun r;
      r.seed = first_seed() + static_cast<int>(i);
      r.completed = summary.value("completed", std::int64_t{0});
      r.submitted = summary.value("submitted", r.completed);
      r.request_throughput = summary.value("request_throughput", 0.0);
      std::ifstream csv(sd + "/requests.csv");
      std::stringstream text;
      text << csv.rdbuf();
      r.steady = steady_state(parse_requests_csv(text.str(), sd + "/requests.csv"), statistic_);
      runs.push_back(std::move(r));
    }
    return runs;
  }

  std::string scenario_;
  std::vector<std::string> overrides_;
  std::string dir_;
  serving::Slo slo_;
  std::string statistic_;
  Options options_;
  std::string binary_;
  double count_ = 0;
  Placement last_placement_;
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
      "kernelsight capacity SCENARIO.yaml --slo ttft=2s,tpot=50ms --find rate|speedup|replicas [options]\n\n"
      "Searches simulated runs of the scenario (each in its own process) for the highest request rate\n"
      "(--find rate: sets workload.rate), the highest trace speed-up (--find speedup: sets\n"
      "workload.speedup of a trace workload) or the fewest replicas (--find replicas: sets `replicas`, at\n"
      "the scenario's rate, and as many topology nodes as they need) that MEET the SLOs. Every probe runs\n"
      "--seeds seeds and is judged on its steady state: the first 20% and last 10% of requests (and at\n"
      "least two median decode times) are left out, runs are lengthened until the measured window is\n"
      "long enough, and a run whose requests-in-system count grows is UNSTABLE. A probe meets when on\n"
      "every seed all requests completed, the run is stable and the statistic (--percentile) of each\n"
      "metric is at or under its limit less --margin. Prints every probe and the answer with its\n"
      "binding metric; writes DIR/capacity.csv (one row per probe and seed) and DIR/probes/NN-VALUE/seed-S/.\n\noptions");
  std::string scenario_path, slo_arg, statistic = "p99", find, min_text, max_text, out_dir;
  double tolerance = 0.05, margin = 0.05;
  int seeds = 3, jobs = 0;
  std::int64_t max_requests = 16000;
  double kernel_percentile = 0;
  std::vector<std::string> overrides;
  opts.add_options()("help,h", "show this help")(
      "slo", po::value(&slo_arg), "limits, e.g. ttft=2s,tpot=50ms,e2el=30s (bare numbers: ms); required")(
      "percentile", po::value(&statistic)->default_value(statistic), "statistic compared with the limits: p99, p90, median, mean")(
      "find", po::value(&find), "`rate` (highest request rate), `speedup` (highest trace speed-up) or `replicas` (fewest replicas); required")(
      "min", po::value(&min_text), "rate/speedup: lowest value to consider, where the search starts (e.g. 4/s; default: start at 1)")(
      "max", po::value(&max_text), "rate/speedup: highest value to try (default: 1024x the start); replicas: most replicas (default 64)")(
      "tolerance", po::value(&tolerance)->default_value(tolerance),
      "rate/speedup: stop when the failing value is within this fraction above the answer")(
      "seeds", po::value(&seeds)->default_value(seeds), "seeds per probe (seed=1..N); a probe meets only on every seed")(
      "margin", po::value(&margin)->default_value(margin), "meet each limit with this fraction to spare (0.05: under 95% of it)")(
      "max-requests", po::value(&max_requests)->default_value(max_requests),
      "longest run a probe is lengthened to (requests) while its steady-state window is too short")(
      "jobs,j", po::value(&jobs), "seed runs at a time (default: the number of cores)")(
      "kernel-percentile", po::value(&kernel_percentile),
      "plan against the kernel model's pessimistic band: every kernel class at this percentile of its "
      "measured/predicted ratio (data/calibration/uncertainty.yaml), e.g. 95")(
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
  if (find != "rate" && find != "replicas" && find != "speedup")
    return usage_error(find.empty() ? "--find is required: rate, speedup or replicas"
                                    : "--find " + find + ": expected rate, speedup or replicas");
  if (find == "replicas" && (!min_text.empty() || !vm["tolerance"].defaulted()))
    return usage_error("--min and --tolerance apply to --find rate and --find speedup only");
  if (seeds < 1 || seeds > 100) return usage_error("--seeds " + std::to_string(seeds) + ": expected 1 to 100 seeds");
  if (!(margin >= 0 && margin < 1)) return usage_error("--margin " + fmt("%g", margin) + ": expected a fraction in [0, 1), e.g. 0.05");
  if (max_requests < 1) return usage_error("--max-requests " + std::to_string(max_requests) + ": expected at least 1");
  if (vm.count("jobs") && jobs < 1) return usage_error("--jobs " + std::to_string(jobs) + ": expected at least 1");
  if (vm.count("kernel-percentile") && !(kernel_percentile > 0 && kernel_percentile < 100))
    return usage_error("--kernel-percentile " + fmt("%g", kernel_percentile) + ": expected a percentile in (0, 100), e.g. 95");

  return run_reporting_errors([&] {
    const serving::Slo slo = parse_slo(slo_arg);
    judge(nlohmann::json::object(), slo, statistic);  // rejects an unknown --percentile before any run
    if (!fs::is_regular_file(scenario_path)) throw config::ConfigError({scenario_path}, "", "no such scenario file");
    const std::string dir = out_dir.empty() ? "results/" + fs::path(scenario_path).stem().string() + "-capacity" : out_dir;
    util::ensure_directory(dir);
    if (kernel_percentile > 0) {  // every probe's kernels at the pessimistic percentile of their class
      config::Document doc = config::Document::load_file(scenario_path);
      for (const auto& o : overrides) doc.apply_override(o);
      const auto [tier_text, user_scales] = scenario_kernel_tier(doc.resolved_yaml());
      const auto tier = kernels::parse_tier(tier_text);
      if (!tier) throw std::runtime_error("hardware.gpu.tier '" + tier_text + "' is not a kernel tier");
      const std::string scales =
          percentile_scales(kernels::KernelUncertainty::shipped(), *tier, kernel_percentile / 100.0, user_scales);
      std::cout << "kernels at the " << fmt("%g", kernel_percentile) << "th percentile of the " << tier_text
                << " tier's error: " << scales << "\n";
      overrides.push_back("hardware.gpu.kernel_time_scale=" + scales);
    }
    Prober::Options po_opts;
    po_opts.seeds = seeds;
    po_opts.jobs = jobs > 0 ? jobs : std::min(seeds, available_cores());
    po_opts.margin = margin;
    po_opts.max_requests = max_requests;
    Prober prober(scenario_path, overrides, dir, slo, statistic, po_opts);

    const std::string value_column = find == "rate" ? "rate_per_s" : find == "speedup" ? "speedup" : "replicas";
    const std::string unit = find == "rate" ? "/s" : find == "speedup" ? "x" : " repl";
    std::string csv = "probe," + value_column +
                      ",seed,requests,completed,submitted,measured,window_start_s,window_end_s,growth,stable,seed_meets," +
                      statistic + "_ttft_ms," + statistic + "_tpot_ms," + statistic +
                      "_e2el_ms,request_throughput,probe_meets,seeds_passed,binding,binding_ratio,tensor_parallel,gpus,"
                      "nodes,why\n";
    std::map<double, ProbeResult> results;  // by probed value
    auto record = [&](double key, const std::string& value, ProbeResult r) {
      const ProbeVerdict& v = r.verdict;
      if (prober.count() == 1)  // options are all checked by now
        std::printf("capacity of %s: %s; steady state, %d seed%s, %g%% margin\n", scenario_path.c_str(),
                    slo_text(slo, statistic).c_str(), seeds, seeds > 1 ? "s" : "", margin * 100);
      double throughput = 1e300, growth = -1e300;
      for (const SeedRun& s : r.runs) {
        throughput = std::min(throughput, s.request_throughput);
        growth = std::max(growth, s.steady.growth);
      }
      std::string state = v.meets ? "MEETS (" + std::to_string(v.seeds_passed) + "/" + std::to_string(v.seeds) + " seeds)"
                                  : (!v.stable ? "UNSTABLE, fails: " : "fails: ") + v.why;
      std::printf("probe %2d: %-10s %s TTFT %9.1f ms  TPOT %7.2f ms  E2EL %9.1f ms  growth %+6.1f%%  %lld req  %s\n",
                  prober.count(), (value + unit).c_str(), statistic.c_str(), v.worst_ttft_ms, v.worst_tpot_ms,
                  v.worst_e2el_ms, growth * 100, static_cast<long long>(r.num_requests), state.c_str());
      std::fflush(stdout);
      for (const SeedRun& s : r.runs) {
        const SteadyState& st = s.steady;
        csv += std::to_string(prober.count()) + "," + value + "," + std::to_string(s.seed) + "," +
               std::to_string(st.requests) + "," + std::to_string(s.completed) + "," + std::to_string(s.submitted) +
               "," + std::to_string(st.measured) + "," + fmt("%.6f", st.window_start_s) + "," +
               fmt("%.6f", st.window_end_s) + "," + fmt("%.6f", st.growth) + "," + (st.stable ? "true" : "false") + "," +
               (s.meets ? "true" : "false") + "," + fmt("%.6f", st.ttft_ms) + "," + fmt("%.6f", st.tpot_ms) + "," +
               fmt("%.6f", st.e2el_ms) + "," + fmt("%.6f", s.request_throughput) + "," + (v.meets ? "true" : "false") +
               "," + std::to_string(v.seeds_passed) + "," + v.binding + "," + fmt("%.6f", v.binding_ratio) + "," +
               std::to_string(r.tensor_parallel) + "," + (r.gpus > 0 ? std::to_string(r.gpus) : "") + "," +
               (r.nodes > 0 ? std::to_string(r.nodes) : "") + "," + csv_field(s.why) + "\n";
      }
      util::write_file_atomically(dir + "/capacity.csv", csv);
      const bool meets = v.meets;
      results[key] = std::move(r);
      return meets;
    };
    auto metric_of = [&](const ProbeVerdict& v, const std::string& name) {
      return name == "TTFT" ? std::make_pair(v.worst_ttft_ms, slo.ttft_s * 1e3)
             : name == "TPOT" ? std::make_pair(v.worst_tpot_ms, slo.tpot_s * 1e3)
                              : std::make_pair(v.worst_e2el_ms, slo.e2el_s * 1e3);
    };
    // The answer's confidence: seeds passed, the binding metric's worst seed against its limit.
    auto confidence = [&](const ProbeResult& r) {
      const ProbeVerdict& v = r.verdict;
      const auto [worst, limit] = metric_of(v, v.binding);
      std::printf("  confidence: met on %d of %d seeds, every run stable, with a %g%% margin (limits x %g)\n",
                  v.seeds_passed, v.seeds, margin * 100, 1 - margin);
      std::printf("  binding: %s %s, worst seed %s ms vs limit %s ms (%.0f%%; %s ms with the margin)\n",
                  statistic.c_str(), v.binding.c_str(), fmt("%.1f", worst).c_str(), fmt("%g", limit).c_str(),
                  v.binding_ratio * 100, fmt("%g", limit * (1 - margin)).c_str());
    };

    if (find == "rate" || find == "speedup") {
      RateSearch search;
      const std::string flag = find == "rate" ? "workload.rate=" : "workload.speedup=";
      if (!min_text.empty()) search.min = find == "rate" ? parse_rate("--min", min_text) : parse_speedup("--min", min_text);
      if (!max_text.empty()) search.max = find == "rate" ? parse_rate("--max", max_text) : parse_speedup("--max", max_text);
      search.tolerance = tolerance;
      const SearchResult r = search_rate(search, [&](double x) {
        const std::string value = fmt("%.6g", x);
        return record(x, value, prober.run(find + "-" + value, {flag + value + (find == "rate" ? "/s" : "")}));
      });
      double failed_above = 0;
      for (const Probe& p : r.probes)
        if (!p.meets && p.value > r.answer && (failed_above == 0 || p.value < failed_above)) failed_above = p.value;
      const std::string what = find == "rate" ? " req/s" : "x speed-up";
      std::printf("answer: %s%s", fmt("%.6g", r.answer).c_str(), what.c_str());
      if (r.at_limit) std::printf(" (meets the SLOs at the search's upper limit: raise --max to look higher)\n");
      else {
        const ProbeVerdict& above = results.at(failed_above).verdict;
        std::printf(" (%s%s fails%s; tolerance %g)\n", fmt("%.6g", failed_above).c_str(), what.c_str(),
                    !above.stable ? ", unstable" : "", tolerance);
      }
      confidence(results.at(r.answer));
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
      // Replicas go on as many nodes of the scenario's topology as they need: the first probe (one
      // replica) tells the GPUs per node and per replica.
      Placement base;
      bool have_base = false;
      const SearchResult r = search_replicas(max, [&](int n) {
        std::vector<std::string> assignments = {"replicas=" + std::to_string(n)};
        int nodes = 0;
        if (have_base && base.gpus_per_node > 0 && base.nodes > 0) {
          const int gpus = n * base.tp * base.pp;
          nodes = std::max(base.nodes, (gpus + base.gpus_per_node - 1) / base.gpus_per_node);
          if (nodes != base.nodes) assignments.push_back("hardware.topology.nodes=" + std::to_string(nodes));
        }
        ProbeResult pr = prober.run("replicas-" + std::to_string(n), assignments);
        if (!have_base) {
          base = prober.last_placement();
          have_base = true;
        }
        return record(n, std::to_string(n), std::move(pr));
      });
      const int n = static_cast<int>(r.answer);
      const ProbeResult& best = results.at(r.answer);
      const int gpus = n * base.tp * base.pp;
      std::printf("answer: %d replica%s (%d GPUs at tp=%d%s", n, n > 1 ? "s" : "", gpus, base.tp,
                  base.pp > 1 ? (", pp=" + std::to_string(base.pp)).c_str() : "");
      if (best.nodes > 0 && base.gpus_per_node > 0)
        std::printf(", on %d node%s of %d GPUs", best.nodes, best.nodes > 1 ? "s" : "", base.gpus_per_node);
      std::printf(")");
      if (n > 1) std::printf("; %d fails%s\n", n - 1, results.count(n - 1) && !results.at(n - 1).verdict.stable ? ", unstable" : "");
      else std::printf("\n");
      confidence(best);
    }
    std::printf("%d probes; %s/capacity.csv\n", prober.count(), dir.c_str());
    return kExitOk;
  });
}

}  // namespace ks::app
