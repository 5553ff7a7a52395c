#pragma once
// A sweep: a base scenario and a list of points, each a list of `--set` overrides. Pure C++ (no
// SystemC): reading SWEEP.yaml, the manifest a sweep folder carries (so Slurm array tasks and
// `kernelsight merge` work from the folder alone), and the merged sweep.csv.
//
// A sweep folder DIR holds sweep.json (the manifest), sweep.csv, and points/NNNN/ per point with
// overrides.yaml, run.log, status.json ({"status": "ok"|"failed", "exit_code", "error"}) and the
// usual run outputs (summary.json, requests.csv, ...).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/config/error.hpp"

namespace ks::app {

// One `--set key=value`; value is YAML text as written in the sweep file (flow style for
// sequences and mappings).
struct Override {
  std::string key;
  std::string value;
  config::SourceMark mark;  // where the sweep file gives it
};

struct SweepPoint {
  std::vector<Override> swept;  // the point's own values, in swept-key order
};

struct SweepPlan {
  std::string name;                     // `name:`, else the sweep file's stem
  std::string sweep_file;
  std::string base;                     // the base scenario, relative to the sweep file resolved
  std::string out;                      // `out:` ("" when not given)
  std::vector<Override> common;         // `set:`, applied to every point before its own values
  std::vector<std::string> swept_keys;  // grid keys in file order, or every key the points name
  std::vector<SweepPoint> points;

  // Every override of point i (common first, then the point's own), as `key=value` arguments.
  std::vector<std::string> assignments(std::size_t i) const;
};

// Reads SWEEP.yaml. Throws config::ConfigError (file:line:col, key path, expectation) for a
// missing/unreadable file, unknown top-level keys, a missing base, both or neither of grid and
// points, empty value lists, non-scalar keys. Keys and values are checked by the scenario layer
// (`kernelsight check` per point), not here.
SweepPlan load_sweep(const std::string& path);

// The folder name of point i among n: zero-padded to at least 4 digits ("0007").
std::string point_name(std::size_t i, std::size_t n);

// The manifest (DIR/sweep.json): what `sweep-task` and `merge` need, with absolute paths.
nlohmann::json sweep_manifest(const SweepPlan& plan, const std::string& binary, const std::vector<std::string>& plugins);
// overrides.yaml of point i: every override it runs with (common then swept), one `key: value` line each.
std::string point_overrides_yaml(const nlohmann::json& manifest, std::size_t i);
// The `kernelsight run` arguments of point i (binary excluded), writing into `point_dir`.
std::vector<std::string> point_run_args(const nlohmann::json& manifest, std::size_t i, const std::string& point_dir);

// What merging the points of a sweep folder found.
struct MergeResult {
  std::string csv;
  std::size_t ok = 0;
  std::vector<std::pair<std::size_t, std::string>> failed;  // point, first error line
  std::vector<std::size_t> missing;                        // no status.json yet
};
// Reads DIR/points/*/status.json and summary.json as the manifest lists them. sweep.csv columns:
// point,status, one per swept key (value as written), then every scalar of summary.json (nested
// objects as dotted names) sorted by name; blank where a point has none. status: ok, failed, missing.
MergeResult merge_sweep(const std::string& dir, const nlohmann::json& manifest);

// The Slurm job-array script: task i runs point i with `binary sweep-task DIR i`.
std::string slurm_script(const nlohmann::json& manifest, const std::string& dir);

// One CSV field, quoted when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);

}  // namespace ks::app
