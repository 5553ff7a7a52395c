#include "app/prediction_intervals.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "app/child_process.hpp"
#include "base/util/atomic_file.hpp"
#include "base/util/rng.hpp"

#include <yaml-cpp/yaml.h>

namespace ks::app {

std::array<double, kernels::kNumKernelClasses> sample_scales(const kernels::KernelUncertainty& u, kernels::Tier tier,
                                                             std::uint64_t seed, int index) {
  util::Rng rng = util::Rng::for_component(seed, "interval-sample-" + std::to_string(index));
  std::array<double, kernels::kNumKernelClasses> scales;
  for (std::size_t c = 0; c < kernels::kNumKernelClasses; ++c)
    scales[c] = u.ratio_quantile(tier, static_cast<kernels::KernelClass>(c), rng.uniform());
  return scales;
}

std::string percentile_scales(const kernels::KernelUncertainty& u, kernels::Tier tier, double p,
                              const std::string& user_scales) {
  auto scales = kernels::parse_class_scales(user_scales);
  for (std::size_t c = 0; c < scales.size(); ++c) scales[c] *= u.ratio_quantile(tier, static_cast<kernels::KernelClass>(c), p);
  return kernels::format_class_scales(scales);
}

std::pair<std::string, std::string> scenario_kernel_tier(const std::string& yaml_text) {
  const YAML::Node gpu = YAML::Load(yaml_text)["hardware"]["gpu"];
  if (gpu && gpu["kind"] && gpu["kind"].as<std::string>() != "catalog")
    throw std::runtime_error("the kernel model's uncertainty applies to GPUs of kind 'catalog'; hardware.gpu.kind is '" +
                             gpu["kind"].as<std::string>() + "'");
  return {gpu && gpu["tier"] ? gpu["tier"].as<std::string>() : "cross-gen",
          gpu && gpu["kernel_time_scale"] ? gpu["kernel_time_scale"].as<std::string>() : ""};
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

const std::vector<std::string>& interval_metrics() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"request_throughput", "output_throughput", "total_token_throughput"};
    for (const char* m : {"ttft", "tpot", "itl", "e2el"})
      for (const char* s : {"mean", "median", "p90", "p99"}) n.push_back(std::string(s) + "_" + m + "_ms");
    return n;
  }();
  return names;
}

nlohmann::json run_intervals(const IntervalRequest& request, const kernels::KernelUncertainty& u,
                             const std::string& uncertainty_path) {
  const auto tier = kernels::parse_tier(request.tier);
  if (!tier) throw std::runtime_error("--intervals: unknown tier '" + request.tier + "'");
  const auto user = kernels::parse_class_scales(request.user_scales);
  namespace fs = std::filesystem;
  fs::create_directories(request.work_dir);
  const std::string binary = self_executable();
  const std::size_t n = static_cast<std::size_t>(request.samples);
  std::vector<std::array<double, kernels::kNumKernelClasses>> scales(n);
  std::vector<nlohmann::json> results(n);
  std::string failure;
  run_parallel(
      n, request.jobs,
      [&](std::size_t i) {
        scales[i] = sample_scales(u, *tier, request.seed, static_cast<int>(i));
        for (std::size_t c = 0; c < scales[i].size(); ++c) scales[i][c] *= user[c];
        const std::string dir = request.work_dir + "/sample_" + std::to_string(i);
        std::vector<std::string> args = {"run", request.scenario_path, "-q", "-o", dir};
        for (const auto& o : request.overrides) args.insert(args.end(), {"--set", o});
        args.insert(args.end(), {"--set", "hardware.gpu.kernel_time_scale=" + kernels::format_class_scales(scales[i])});
        return spawn_logged(binary, args, request.work_dir + "/sample_" + std::to_string(i) + ".log");
      },
      [&](std::size_t i, int status) {
        const std::string log = request.work_dir + "/sample_" + std::to_string(i) + ".log";
        if (!exited_ok(status)) {
          if (failure.empty()) failure = "sample " + std::to_string(i) + ": " + first_error_line(log, status);
          return;
        }
        std::ifstream in(request.work_dir + "/sample_" + std::to_string(i) + "/summary.json");
        results[i] = nlohmann::json::parse(in);
      });
  if (!failure.empty()) throw std::runtime_error("--intervals: " + failure);

  nlohmann::json out;
  out["samples"] = request.samples;
  out["tier"] = request.tier;
  out["uncertainty"] = uncertainty_path;
  out["band"] = "5th-95th percentile over samples of the kernel model's per-class error";
  std::string csv = "sample";
  for (std::size_t c = 0; c < kernels::kNumKernelClasses; ++c)
    csv += ",scale_" + std::string(kernels::class_name(static_cast<kernels::KernelClass>(c)));
  std::vector<std::string> present;
  for (const auto& m : interval_metrics())
    if (results.front().contains(m) && results.front()[m].is_number()) present.push_back(m);
  for (const auto& m : present) csv += "," + m;
  csv += "\n";
  char buf[64];
  for (std::size_t i = 0; i < n; ++i) {
    csv += std::to_string(i);
    for (double s : scales[i]) std::snprintf(buf, sizeof buf, ",%.6g", s), csv += buf;
    for (const auto& m : present) std::snprintf(buf, sizeof buf, ",%.6g", results[i][m].get<double>()), csv += buf;
    csv += "\n";
  }
  for (const auto& m : present) {
    std::vector<double> v;
    for (const auto& r : results) v.push_back(r[m].get<double>());
    out["metrics"][m] = {{"p5", percentile(v, 0.05)}, {"p50", percentile(v, 0.5)}, {"p95", percentile(v, 0.95)}};
  }
  util::write_file_atomically(request.work_dir + "/intervals.csv", csv);
  for (std::size_t i = 0; i < n; ++i) {
    fs::remove_all(request.work_dir + "/sample_" + std::to_string(i));
    fs::remove(request.work_dir + "/sample_" + std::to_string(i) + ".log");
  }
  return out;
}

std::string format_intervals(const nlohmann::json& intervals) {
  std::string out = "---------- 90% prediction interval (" + std::to_string(intervals["samples"].get<int>()) +
                    " samples, tier " + intervals["tier"].get<std::string>() + ") ----------\n";
  char line[160];
  const std::pair<const char*, const char*> shown[] = {
      {"request_throughput", "Request throughput (req/s):"}, {"output_throughput", "Output token throughput (tok/s):"},
      {"mean_ttft_ms", "Mean TTFT (ms):"},       {"p99_ttft_ms", "P99 TTFT (ms):"},
      {"mean_tpot_ms", "Mean TPOT (ms):"},       {"p99_tpot_ms", "P99 TPOT (ms):"},
      {"mean_itl_ms", "Mean ITL (ms):"},         {"mean_e2el_ms", "Mean E2EL (ms):"}};
  for (const auto& [key, label] : shown) {
    if (!intervals["metrics"].contains(key)) continue;
    const auto& b = intervals["metrics"][key];
    std::snprintf(line, sizeof line, "%-40s %.2f - %.2f (median %.2f)\n", label, b["p5"].get<double>(),
                  b["p95"].get<double>(), b["p50"].get<double>());
    out += line;
  }
  out += "(kernel classes only; collectives and engine overheads as predicted)\n";
  return out;
}

}  // namespace ks::app
