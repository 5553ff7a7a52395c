#pragma once
// `run --intervals`: the kernel model's uncertainty carried to the serving metrics. Each sample
// re-runs the scenario (same requests, same seed) in a child process with one time multiplier per
// kernel class drawn from the tier's residual quantiles (kernels/kernel_uncertainty.hpp); the
// bands are the 5th, 50th and 95th percentiles of each metric over the samples.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/kernel_uncertainty.hpp"

namespace ks::app {

struct IntervalRequest {
  std::string scenario_path;
  std::vector<std::string> overrides;  // the run's own --set assignments, passed on to every sample
  std::string tier;                    // the scenario's hardware.gpu.tier
  std::string user_scales;             // the scenario's hardware.gpu.kernel_time_scale (composed)
  std::string work_dir;                // samples run in <work_dir>/sample_<i>/ (removed afterwards)
  int samples = 20;
  int jobs = 1;
  std::uint64_t seed = 0;
};

// The multipliers of sample `index`: classes drawn independently, the same for every run of the
// same seed.
std::array<double, kernels::kNumKernelClasses> sample_scales(const kernels::KernelUncertainty& u, kernels::Tier tier,
                                                             std::uint64_t seed, int index);

// kernel_time_scale text putting every class at cumulative probability p of the tier's
// measured/predicted ratio, times the user's own multipliers: `capacity --kernel-percentile`.
// Every class at once: more pessimistic than the same percentile of the end-to-end band.
std::string percentile_scales(const kernels::KernelUncertainty& u, kernels::Tier tier, double p,
                              const std::string& user_scales);

// The scenario's kernel tier and kernel_time_scale (hardware.gpu), from its YAML text after
// overrides; "cross-gen" and "" where unset. Throws when the GPU kind is not `catalog`.
std::pair<std::string, std::string> scenario_kernel_tier(const std::string& yaml_text);

// Linear-interpolated percentile (numpy's default) of `values` at q in [0, 1]; values non-empty.
double percentile(std::vector<double> values, double q);

// The metrics the bands cover, as summary.json names them.
const std::vector<std::string>& interval_metrics();

// Runs the samples; returns {"samples", "tier", "uncertainty", "metrics": {name: {p5, p50, p95}}}
// and writes <work_dir>/intervals.csv (one row per sample: multipliers and metrics). Throws
// std::runtime_error with the first failing sample's error.
nlohmann::json run_intervals(const IntervalRequest& request, const kernels::KernelUncertainty& u,
                             const std::string& uncertainty_path);

// The lines printed under the metrics table.
std::string format_intervals(const nlohmann::json& intervals);

}  // namespace ks::app
