#pragma once
// The prediction tiers of the kernel model:
//   roofline   eta = 1, plus a fixed launch latency: the baseline every tier is compared with
//   cross-gen  the efficiency model fitted on the shipped sweeps of every GPU except the target,
//              applied to the target's spec sheet (no measurement of the target)
//   target     the efficiency model re-fitted on a sweep measured on the target GPU, with the
//              cross-gen model as its prior (a calibration file from `kernelsight calibrate`)
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/efficiency_fit.hpp"
#include "kernels/efficiency_model.hpp"
#include "kernels/sweep.hpp"

namespace ks::kernels {

enum class Tier { Roofline, CrossGen, Target };

std::optional<Tier> parse_tier(std::string_view name);
std::string_view tier_name(Tier tier);

// Launch latency of the roofline baseline.
constexpr double kRooflineLaunchSeconds = 2e-6;

// A subfolder of a sweep folder holding a file of this name is a test set: load_sweeps skips it
// (data/sweeps/microbench/, the real-GPU sweeps scripts/validate_hardware.sh scores).
inline constexpr const char* kHeldOutMarker = "HELD_OUT";

// Every sweep (*.csv) under `dir` (default: <data_dir>/sweeps), subfolders included except those
// marked held out (kHeldOutMarker), in path order.
std::vector<Measurement> load_sweeps(const std::string& dir = "");

// The serving engine whose kernels a row measured: its `framework` column, else the engine named
// by an AIConfigurator source ("aic-trtllm-bf16" -> "trtllm"); "" for engine-neutral sources
// (Vidur's operator profiles, XLA's tables).
std::string row_framework(const Measurement& m);

struct CrossGenOptions {
  std::vector<std::string> leave_out;  // GPUs whose rows are not fitted (the target, its generation)
  // Fit for this engine's kernels: a class the engine's rows cover is fitted on those rows only
  // (attention kernels differ by engine); other classes on every row. "": every row.
  std::string framework;
  // Fit only the attention rows of this backend (attention_backend.hpp; of `framework` when set):
  // a backend's own attention calibration, with the engine's fit (same GPUs left out) as its
  // prior. "": every row.
  std::string attention_backend;
};

// The attention backend of a measured row (attention_backend_of on its engine and kernel
// source); "" for other classes and rows without a known backend.
std::string row_attention_backend(const Measurement& m);

// Only the attention rows of `backend` (an attention_backend_names() entry).
std::vector<Measurement> attention_rows_of(const std::vector<Measurement>& rows, const std::string& backend);

// A backend's attention calibration keeps the attention classes its rows fitted: every other
// class is marked unfitted (the store takes only fitted attention classes from it).
void keep_fitted_attention(EfficiencyModel& model, const std::vector<Measurement>& rows, const std::string& backend);

// The cross-generation model: fitted on `sweeps` without the left-out GPUs' rows.
EfficiencyModel fit_cross_gen(const std::vector<Measurement>& sweeps, const CrossGenOptions& options);
// The same, leaving `target_gpu` out (none if empty).
EfficiencyModel fit_cross_gen(const std::vector<Measurement>& sweeps, const std::string& target_gpu);

// The target-tier model: `target_rows` (all of the target GPU) fitted with `prior` as the prior.
EfficiencyModel fit_target(const std::vector<Measurement>& target_rows, const EfficiencyModel& prior);

}  // namespace ks::kernels
