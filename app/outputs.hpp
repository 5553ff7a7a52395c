#pragma once
// Result files beside summary.json: requests.csv (one row per request), kernels.csv (GPU time by
// kernel and phase with its roofline position), goodput under SLOs. Pure formatting of what the
// simulation recorded; deterministic (fixed formats, sorted keys, no wall clock).
#include <string>

#include <nlohmann/json.hpp>

#include "app/simulation.hpp"
#include "serving/metrics.hpp"

namespace ks::app {

// "ttft=200ms,tpot=50ms,e2el=2s"; a bare number is milliseconds (as vllm bench --goodput).
// Throws config::ConfigError naming `--slo` on bad input.
serving::Slo parse_slo(const std::string& text);

std::string requests_csv(const Simulation& sim);
std::string kernels_csv(const Simulation& sim);
// Adds goodput keys (slo_*_ms, good_requests, request_goodput) to a summary.
void add_goodput(nlohmann::json& summary, const Simulation& sim, const serving::Slo& slo);

}  // namespace ks::app
