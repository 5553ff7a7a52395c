// `kernelsight sweep`, `sweep-task` and `merge`: many runs of one scenario with different
// overrides, each simulation in its own process (one SystemC elaboration per process), locally
// with -j or as a Slurm job array; results gathered into sweep.csv (app/sweep_plan.hpp).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "app/child_process.hpp"
#include "app/cli_options.hpp"
#include "app/commands.hpp"
#include "app/plugins.hpp"
#include "app/sweep_plan.hpp"
#include "base/util/atomic_file.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace ks::app {
namespace {

nlohmann::json read_manifest(const std::string& dir) {
  const fs::path path = fs::path(dir) / "sweep.json";
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("no sweep manifest " + path.string() + " (is " + dir + " a sweep folder?)");
  const auto m = nlohmann::json::parse(in, nullptr, false);
  if (!m.is_object() || !m.contains("points") || !m.contains("base"))
    throw std::invalid_argument("unreadable sweep manifest " + path.string());
  return m;
}

std::string point_dir(const std::string& dir, const nlohmann::json& m, std::size_t i) {
  return (fs::path(dir) / "points" / m["points"].at(i)["name"].get<std::string>()).string();
}

// Clears what an earlier run of the point left and writes its overrides.
void prepare_point(const std::string& dir, const nlohmann::json& m, std::size_t i) {
  const std::string pd = point_dir(dir, m, i);
  util::ensure_directory(pd);
  for (const char* stale : {"status.json", "summary.json"}) fs::remove(fs::path(pd) / stale);
  util::write_file_atomically(pd + "/overrides.yaml", point_overrides_yaml(m, i));
}

pid_t start_point(const std::string& dir, const nlohmann::json& m, std::size_t i, const std::string& binary) {
  const std::string pd = point_dir(dir, m, i);
  fs::remove(fs::path(pd) / "status.json");
  return spawn_logged(binary, point_run_args(m, i, pd), pd + "/run.log");
}

// Writes the point's status.json; returns "" when it succeeded, else its first error line.
std::string finish_point(const std::string& dir, const nlohmann::json& m, std::size_t i, int wait_status) {
  const std::string pd = point_dir(dir, m, i);
  const bool ok = exited_ok(wait_status);
  const std::string error = ok ? "" : first_error_line(pd + "/run.log", wait_status);
  nlohmann::json status = {{"status", ok ? "ok" : "failed"}, {"exit_code", exit_code(wait_status)}};
  if (!ok) status["error"] = error;
  util::write_file_atomically(pd + "/status.json", status.dump(2) + "\n");
  return error;
}

std::string describe_point(const nlohmann::json& m, std::size_t i) {
  std::string s;
  const auto& swept = m["points"].at(i)["swept"];
  for (const auto& key : m["keys"])
    if (swept.contains(key)) s += (s.empty() ? "" : " ") + key.get<std::string>() + "=" + swept[key].get<std::string>();
  return s;
}

// Writes sweep.csv and reports; the exit status: 0 all ok, 1 some failed or missing.
int merge_and_report(const std::string& dir, const nlohmann::json& m) {
  const MergeResult r = merge_sweep(dir, m);
  util::write_file_atomically(dir + "/sweep.csv", r.csv);
  const std::size_t n = m["points"].size();
  for (const auto& [i, error] : r.failed)
    std::cerr << "point " << i << " (" << describe_point(m, i) << ") failed: " << error << "\n";
  if (!r.missing.empty()) {
    std::cerr << r.missing.size() << " point(s) have no result yet:";
    for (std::size_t k = 0; k < r.missing.size() && k < 20; ++k) std::cerr << " " << r.missing[k];
    std::cerr << (r.missing.size() > 20 ? " ..." : "") << "\n";
  }
  std::cout << "sweep '" << m["name"].get<std::string>() << "': " << r.ok << " of " << n << " points ok, "
            << r.failed.size() << " failed, " << r.missing.size() << " missing; " << dir << "/sweep.csv\n";
  return r.failed.empty() && r.missing.empty() ? kExitOk : kExitFailure;
}

// `kernelsight check` of every point, `jobs` at a time; prints each distinct error with the sweep
// file position of the override it names. Returns false when any point is invalid.
bool check_points(const SweepPlan& plan, const std::string& binary, int jobs) {
  const fs::path tmp = fs::temp_directory_path() / ("kernelsight-sweep-check-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::map<std::string, std::vector<std::size_t>> errors;  // message -> points
  std::vector<std::string> order;
  run_parallel(
      plan.points.size(), jobs,
      [&](std::size_t i) {
        std::vector<std::string> args = {"check", plan.base};  // the command first, as main() expects
        for (const auto& p : loaded_plugins()) args.insert(args.end(), {"--plugin", p});
        for (const auto& a : plan.assignments(i)) args.insert(args.end(), {"--set", a});
        return spawn_logged(binary, args, (tmp / (std::to_string(i) + ".log")).string());
      },
      [&](std::size_t i, int status) {
        if (exited_ok(status)) return;
        std::string error = first_error_line((tmp / (std::to_string(i) + ".log")).string(), status);
        // "--set key=value: ..." names an override: point at the sweep file line that gives it.
        std::vector<Override> all = plan.common;
        all.insert(all.end(), plan.points[i].swept.begin(), plan.points[i].swept.end());
        for (const Override& o : all)
          if (error.rfind("--set " + o.key + "=" + o.value + ":", 0) == 0) {
            error = o.mark.str() + ": " + error;
            break;
          }
        if (errors.find(error) == errors.end()) order.push_back(error);
        errors[error].push_back(i);
      });
  fs::remove_all(tmp);
  if (errors.empty()) return true;
  std::sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) { return errors[a] < errors[b]; });
  for (std::size_t k = 0; k < order.size() && k < 10; ++k) {
    const auto& points = errors[order[k]];
    std::cerr << "error: " << order[k] << " (point" << (points.size() > 1 ? "s " : " ");
    for (std::size_t p = 0; p < points.size() && p < 8; ++p) std::cerr << (p ? ", " : "") << points[p];
    std::cerr << (points.size() > 8 ? ", ..." : "") << ")\n";
  }
  if (order.size() > 10) std::cerr << "... and " << order.size() - 10 << " more distinct errors\n";
  std::cerr << "sweep " << plan.sweep_file << ": nothing was run\n";
  return false;
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
  po::options_description opts(
      "kernelsight sweep SWEEP.yaml [-j N] [--out DIR] [--emit slurm]\n\n"
      "Runs a base scenario at every point of a grid (or list) of `--set` overrides, each point in its\n"
      "own process, at most N at a time, after checking every point. Writes DIR/points/NNNN/ (the run\n"
      "outputs, overrides.yaml, run.log, status.json) and DIR/sweep.csv (one row per point). Exit 1\n"
      "when a point failed. SWEEP.yaml:\n"
      "  base: ../quickstart.yaml          # relative to the sweep file\n"
      "  set: {workload.num_requests: 500}  # applied to every point (optional)\n"
      "  grid: {workload.rate: [2/s, 4/s], parallel.tp: [1, 2]}   # cartesian product, or\n"
      "  points: [{workload.rate: 2/s}, {workload.rate: 8/s, replicas: 2}]\n"
      "  name: my-sweep                     # optional; default output folder results/<name>\n"
      "  out: results/my-sweep              # optional\n\noptions");
  std::string sweep_path, out_dir, emit;
  int jobs = available_cores();
  opts.add_options()("help,h", "show this help")("jobs,j", po::value(&jobs)->default_value(jobs),
                                                 "simulations at a time (default: the number of cores)")(
      "out,o", po::value(&out_dir), "output folder (default: the sweep's `out`, else results/<name>)")(
      "emit", po::value(&emit),
      "`slurm`: write the points and DIR/sweep.slurm (a job array) instead of running; then `sbatch` it "
      "and gather the results with `kernelsight merge DIR`");
  po::variables_map vm;
  if (const int rc = parse_options_with_file("sweep", args, opts, vm, "sweep", sweep_path); rc >= 0) return rc;
  if (sweep_path.empty()) {
    std::cerr << "kernelsight sweep: no sweep file given\n\n" << opts;
    return kExitBadInput;
  }
  if (!emit.empty() && emit != "slurm") {
    std::cerr << "kernelsight sweep: --emit " << emit << ": unknown target (known: slurm)\n";
    return kExitBadInput;
  }
  if (jobs < 1) {
    std::cerr << "kernelsight sweep: -j " << jobs << ": expected at least 1\n";
    return kExitBadInput;
  }
  return run_reporting_errors([&] {
    const SweepPlan plan = load_sweep(sweep_path);
    const std::string binary = self_executable();
    std::string dir = !out_dir.empty() ? out_dir : !plan.out.empty() ? plan.out : "results/" + plan.name;
    if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (!check_points(plan, binary, jobs)) return kExitBadInput;

    const nlohmann::json manifest = sweep_manifest(plan, binary, loaded_plugins());
    const std::size_t n = plan.points.size();
    util::ensure_directory(dir);
    util::write_file_atomically(dir + "/sweep.json", manifest.dump(2) + "\n");
    fs::remove(dir + "/sweep.csv");
    for (std::size_t i = 0; i < n; ++i) prepare_point(dir, manifest, i);
    if (emit == "slurm") {
      util::write_file_atomically(dir + "/sweep.slurm", slurm_script(manifest, fs::absolute(dir).lexically_normal().string()));
      std::cout << "sweep '" << plan.name << "': " << n << " points checked; wrote " << dir << "/sweep.slurm\n"
                << "submit it with `sbatch " << dir << "/sweep.slurm`, then gather the results with `"
                << "kernelsight merge " << dir << "`\n";
      return kExitOk;
    }
    std::cerr << "sweep '" << plan.name << "': " << n << " points, " << jobs << " at a time, into " << dir << "/\n";
    std::size_t finished = 0;
    run_parallel(
        n, jobs, [&](std::size_t i) { return start_point(dir, manifest, i, binary); },
        [&](std::size_t i, int status) {
          const std::string error = finish_point(dir, manifest, i, status);
          const int width = static_cast<int>(std::to_string(n).size());
          std::fprintf(stderr, "[%*zu/%zu] point %*zu %s  %s%s\n", width, ++finished, n, width, i, error.empty() ? "ok    " : "FAILED",
                       describe_point(manifest, i).c_str(), error.empty() ? "" : ("  " + error).c_str());
        });
    return merge_and_report(dir, manifest);
  });
}

int cmd_sweep_task(const std::vector<std::string>& args) {
  if (args.empty() || args.size() > 2 || args[0] == "-h" || args[0] == "--help") {
    (args.size() == 1 ? std::cout : std::cerr)
        << "kernelsight sweep-task DIR [INDEX]\n\nRuns point INDEX (default: $SLURM_ARRAY_TASK_ID) of the sweep "
           "folder DIR written by\n`kernelsight sweep --emit slurm`, as DIR/sweep.slurm does for each array task.\n";
    return args.size() == 1 && args[0].rfind("-", 0) == 0 ? kExitOk : kExitBadInput;
  }
  return run_reporting_errors([&] {
    const std::string dir = args[0];
    const nlohmann::json m = read_manifest(dir);
    const char* env = std::getenv("SLURM_ARRAY_TASK_ID");
    const std::string index_text = args.size() == 2 ? args[1] : env ? env : "";
    std::size_t used = 0;
    long index = -1;
    try {
      index = std::stol(index_text, &used);
    } catch (const std::exception&) {
    }
    if (index_text.empty() || used != index_text.size() || index < 0 || static_cast<std::size_t>(index) >= m["points"].size())
      throw std::invalid_argument("point index '" + index_text + "': expected 0.." +
                                  std::to_string(m["points"].size() - 1) + " (argument or SLURM_ARRAY_TASK_ID)");
    const std::size_t i = static_cast<std::size_t>(index);
    prepare_point(dir, m, i);
    const int status = wait_child(start_point(dir, m, i, m["binary"].get<std::string>()));
    const std::string error = finish_point(dir, m, i, status);
    std::cout << "point " << i << " (" << describe_point(m, i) << ") " << (error.empty() ? "ok" : "failed: " + error)
              << "; " << point_dir(dir, m, i) << "/\n";
    return error.empty() ? kExitOk : kExitFailure;
  });
}

int cmd_merge(const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] == "-h" || args[0] == "--help") {
    (args.size() == 1 ? std::cout : std::cerr)
        << "kernelsight merge DIR\n\nGathers the finished points of a sweep folder (e.g. after its Slurm job array) "
           "into\nDIR/sweep.csv and lists failed and missing points. Exit 1 when any is failed or missing.\n";
    return args.size() == 1 ? kExitOk : kExitBadInput;
  }
  return run_reporting_errors([&] { return merge_and_report(args[0], read_manifest(args[0])); });
}

}  // namespace ks::app
