#include "app/sweep_plan.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "base/config/document.hpp"

namespace fs = std::filesystem;

namespace ks::app {
namespace {

const std::vector<std::string> kSweepKeys = {"name", "base", "out", "set", "grid", "points"};

config::SourceMark mark_of(const std::string& origin, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {origin};
  return {origin, m.line + 1, m.column + 1};
}

// A value as written: the scalar's text, or flow-style YAML for sequences and mappings, so that
// `--set key=<text>` reads it back as the same node.
std::string yaml_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  if (node.IsNull()) return "null";
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

// `key: value` pairs of a mapping of overrides (`set:` or one point).
std::vector<Override> overrides_of(const std::string& origin, const YAML::Node& map, const std::string& path) {
  if (!map.IsMap())
    throw config::ConfigError(mark_of(origin, map), path, "expected a mapping of `key.path: value` overrides");
  std::vector<Override> out;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (key.empty()) throw config::ConfigError(mark_of(origin, it->first), path, "empty key");
    out.push_back({key, yaml_text(it->second), mark_of(origin, it->second.IsNull() ? it->first : it->second)});
  }
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Scalars of a summary as (dotted name, text); nested objects flattened, arrays skipped.
void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) flatten(*it, name, out);
    else if (it->is_string()) out[name] = it->get<std::string>();
    else if (it->is_primitive() && !it->is_null()) out[name] = it->dump();
  }
}

}  // namespace

std::vector<std::string> SweepPlan::assignments(std::size_t i) const {
  std::vector<std::string> out;
  for (const Override& o : common) out.push_back(o.key + "=" + o.value);
  for (const Override& o : points.at(i).swept) out.push_back(o.key + "=" + o.value);
  return out;
}

SweepPlan load_sweep(const std::string& path) {
  // The scenario loader gives the YAML errors, duplicate keys and a mapping at the top level.
  config::Document::load_file(path);
  const YAML::Node root = YAML::LoadFile(path);
  SweepPlan plan;
  plan.sweep_file = path;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (std::find(kSweepKeys.begin(), kSweepKeys.end(), key) == kSweepKeys.end()) {
      const std::string hint = config::did_you_mean(key, kSweepKeys);
      std::string detail = "unknown sweep key (";
      if (!hint.empty()) detail += "did you mean '" + hint + "'? ";
      throw config::ConfigError(mark_of(path, it->first), key, detail + "known keys: name, base, out, set, grid, points)");
    }
  }
  auto scalar = [&](const char* key) -> std::string {
    const YAML::Node n = root[key];
    if (!n) return "";
    if (!n.IsScalar()) throw config::ConfigError(mark_of(path, n), key, "expected a string");
    return n.Scalar();
  };
  plan.name = scalar("name");
  if (plan.name.empty()) plan.name = fs::path(path).stem().string();
  plan.out = scalar("out");
  const std::string base = scalar("base");
  if (base.empty())
    throw config::ConfigError({path}, "base", "missing: the scenario every point starts from, e.g. `base: ../quickstart.yaml`");
  fs::path base_path(base);
  if (base_path.is_relative()) base_path = fs::path(path).parent_path() / base_path;
  if (!fs::is_regular_file(base_path))
    throw config::ConfigError(mark_of(path, root["base"]), "base",
                              "no scenario file '" + base_path.string() + "' (relative paths start at the sweep file)");
  plan.base = fs::absolute(base_path).lexically_normal().string();
  if (root["set"]) plan.common = overrides_of(path, root["set"], "set");

  const YAML::Node grid = root["grid"], points = root["points"];
  if (grid && points)
    throw config::ConfigError(mark_of(path, points), "points", "give either `grid` or `points`, not both");
  if (grid) {
    if (!grid.IsMap() || grid.size() == 0)
      throw config::ConfigError(mark_of(path, grid), "grid", "expected a mapping `key.path: [value, ...]` with at least one key");
    std::vector<std::vector<Override>> axes;
    for (auto it = grid.begin(); it != grid.end(); ++it) {
      const std::string key = it->first.Scalar();
      const YAML::Node values = it->second;
      if (!values.IsSequence() || values.size() == 0)
        throw config::ConfigError(mark_of(path, values.IsNull() ? it->first : values), "grid." + key,
                                  "expected a non-empty list of values, e.g. [2/s, 4/s, 8/s]");
      plan.swept_keys.push_back(key);
      std::vector<Override> axis;
      for (const YAML::Node& v : values) axis.push_back({key, yaml_text(v), mark_of(path, v)});
      axes.push_back(axis);
    }
    // Cartesian product, the last key varying fastest (like nested loops in file order).
    std::vector<std::size_t> index(axes.size(), 0);
    while (true) {
      SweepPoint p;
      for (std::size_t a = 0; a < axes.size(); ++a) p.swept.push_back(axes[a][index[a]]);
      plan.points.push_back(p);
      std::size_t a = axes.size();
      while (a > 0 && ++index[a - 1] == axes[a - 1].size()) index[--a] = 0;
      if (a == 0) break;
    }
  } else if (points) {
    if (!points.IsSequence() || points.size() == 0)
      throw config::ConfigError(mark_of(path, points), "points", "expected a non-empty list of mappings `{key.path: value, ...}`");
    for (std::size_t i = 0; i < points.size(); ++i) {
      SweepPoint p;
      p.swept = overrides_of(path, points[i], "points[" + std::to_string(i) + "]");
      for (const Override& o : p.swept)
        if (std::find(plan.swept_keys.begin(), plan.swept_keys.end(), o.key) == plan.swept_keys.end())
          plan.swept_keys.push_back(o.key);
      plan.points.push_back(p);
    }
  } else {
    throw config::ConfigError({path}, "grid", "missing: give `grid: {key.path: [values]}` or `points: [{key.path: value}, ...]`");
  }
  return plan;
}

std::string point_name(std::size_t i, std::size_t n) {
  std::string digits = std::to_string(i);
  const std::size_t width = std::max<std::size_t>(4, std::to_string(n > 0 ? n - 1 : 0).size());
  return std::string(width - std::min(width, digits.size()), '0') + digits;
}

nlohmann::json sweep_manifest(const SweepPlan& plan, const std::string& binary, const std::vector<std::string>& plugins) {
  nlohmann::json m;
  m["name"] = plan.name;
  m["sweep_file"] = fs::absolute(plan.sweep_file).lexically_normal().string();
  m["base"] = plan.base;
  m["binary"] = binary;
  m["plugins"] = plugins;
  m["keys"] = plan.swept_keys;
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    nlohmann::json swept = nlohmann::json::object();
    for (const Override& o : plan.points[i].swept) swept[o.key] = o.value;
    points.push_back({{"name", point_name(i, plan.points.size())}, {"set", plan.assignments(i)}, {"swept", swept}});
  }
  m["points"] = points;
  return m;
}

std::string point_overrides_yaml(const nlohmann::json& manifest, std::size_t i) {
  std::string out = "# point " + std::to_string(i) + " of sweep '" + manifest["name"].get<std::string>() +
                    "': the `--set` overrides applied to " + manifest["base"].get<std::string>() + "\n";
  for (const auto& a : manifest["points"].at(i)["set"]) {
    const std::string s = a.get<std::string>();
    const std::size_t eq = s.find('=');
    out += s.substr(0, eq) + ": " + s.substr(eq + 1) + "\n";
  }
  return out;
}

std::vector<std::string> point_run_args(const nlohmann::json& manifest, std::size_t i, const std::string& point_dir) {
  std::vector<std::string> args = {"run", manifest["base"].get<std::string>(), "--quiet", "--out", point_dir};
  for (const auto& p : manifest["plugins"]) args.insert(args.end(), {"--plugin", p.get<std::string>()});
  for (const auto& a : manifest["points"].at(i)["set"]) args.insert(args.end(), {"--set", a.get<std::string>()});
  return args;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

MergeResult merge_sweep(const std::string& dir, const nlohmann::json& manifest) {
  MergeResult result;
  const auto& points = manifest["points"];
  const std::vector<std::string> keys = manifest["keys"].get<std::vector<std::string>>();
  std::vector<std::string> status(points.size());
  std::vector<std::map<std::string, std::string>> metrics(points.size());
  std::set<std::string> metric_names;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const fs::path point_dir = fs::path(dir) / "points" / points[i]["name"].get<std::string>();
    const fs::path status_file = point_dir / "status.json";
    if (!fs::exists(status_file)) {
      status[i] = "missing";
      result.missing.push_back(i);
      continue;
    }
    const auto st = nlohmann::json::parse(read_text(status_file.string()), nullptr, false);
    if (st.is_discarded() || st.value("status", "") != "ok") {
      status[i] = "failed";
      result.failed.push_back({i, st.is_discarded() ? "unreadable status.json" : st.value("error", "")});
      continue;
    }
    const auto summary = nlohmann::json::parse(read_text((point_dir / "summary.json").string()), nullptr, false);
    if (!summary.is_object()) {
      status[i] = "failed";
      result.failed.push_back({i, "no readable summary.json in " + point_dir.string()});
      continue;
    }
    status[i] = "ok";
    ++result.ok;
    flatten(summary, "", metrics[i]);
    for (const auto& [name, value] : metrics[i]) metric_names.insert(name);
  }
  std::string& csv = result.csv;
  csv = "point,status";
  for (const auto& k : keys) csv += "," + csv_field(k);
  for (const auto& m : metric_names) csv += "," + csv_field(m);
  csv += "\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    csv += std::to_string(i) + "," + status[i];
    for (const auto& k : keys) csv += "," + csv_field(points[i]["swept"].value(k, ""));
    for (const auto& m : metric_names) {
      const auto it = metrics[i].find(m);
      csv += "," + (it == metrics[i].end() ? std::string() : csv_field(it->second));
    }
    csv += "\n";
  }
  return result;
}

namespace {
// Single-quoted for bash.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

std::string slurm_script(const nlohmann::json& manifest, const std::string& dir) {
  const std::size_t n = manifest["points"].size();
  const std::string name = manifest["name"].get<std::string>();
  std::string s = "#!/bin/bash\n";
  s += "# KernelSight sweep '" + name + "': " + std::to_string(n) + " points of " + manifest["base"].get<std::string>() + ".\n";
  s += "# Submit:  sbatch " + dir + "/sweep.slurm\n";
  s += "# Gather:  " + manifest["binary"].get<std::string>() + " merge " + dir + "   (writes sweep.csv, lists missing points)\n";
  s += "# Array task i runs point i (" + dir + "/points/NNNN/overrides.yaml); the #SBATCH lines below are\n";
  s += "# defaults to edit for your cluster (one simulation is one single-threaded process).\n";
  s += "#SBATCH --job-name=ks-" + name + "\n";
  s += "#SBATCH --array=0-" + std::to_string(n - 1) + "\n";
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n#SBATCH --mem=4G\n#SBATCH --time=01:00:00\n";
  s += "#SBATCH --output=" + dir + "/points/slurm-%A_%a.out\n";
  s += "set -euo pipefail\n";
  s += "exec " + shell_quote(manifest["binary"].get<std::string>()) + " sweep-task " + shell_quote(dir) +
       " \"${SLURM_ARRAY_TASK_ID:?run this script as a Slurm array job: sbatch sweep.slurm}\"\n";
  return s;
}

}  // namespace ks::app
