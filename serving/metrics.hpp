#pragma once
// The `vllm bench serve` metric set (vLLM benchmarks/benchmark_serving.py), so simulated results
// sit next to measured ones: TTFT, TPOT (excluding the first token), ITL, E2EL and throughputs.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serving/latency_samples.hpp"

namespace ks::serving {

// One completed request; times in seconds on the simulation clock.
struct RequestRecord {
  std::uint64_t id;
  double arrival_s;
  double first_token_s;
  double finish_s;
  std::int64_t prompt_tokens;
  std::int64_t output_tokens;
};

// Speculative decoding's counters (vLLM's spec_decode metrics): drafts = verified sequences
// with at least one draft, draft_tokens = drafts verified, accepted = drafts accepted,
// accepted_at[i] = sequences that accepted draft position i+1.
struct SpecDecodeStats {
  bool enabled = false;
  std::int64_t drafts = 0, draft_tokens = 0, accepted = 0;
  std::vector<std::int64_t> accepted_at;
  std::int64_t steps = 0, output_tokens = 0, proposer_passes = 0;
  double proposer_cpu_s = 0;
  double acceptance_rate() const { return draft_tokens > 0 ? static_cast<double>(accepted) / draft_tokens : 0.0; }
  // Tokens one verification emits, the bonus token included: 1 + accepted / drafts.
  double mean_acceptance_length() const { return drafts > 0 ? 1.0 + static_cast<double>(accepted) / drafts : 0.0; }
  // Output tokens of the completed requests per engine step (all sequences of a step together).
  double tokens_per_step() const { return steps > 0 ? static_cast<double>(output_tokens) / steps : 0.0; }
};

struct BenchmarkSummary {
  std::int64_t completed;
  double duration_s;
  std::int64_t total_input_tokens, total_output_tokens;
  double request_throughput, output_throughput, total_token_throughput;  // per second
  LatencyStats ttft, tpot, itl, e2el;
  SpecDecodeStats spec;  // printed by format_table when enabled; not in to_json
};

// numpy.percentile with its default (linear) method; q in [0, 100] (else std::invalid_argument).
// An empty set gives 0, as vLLM's `np.percentile(xs or 0, q)` does.
double percentile(std::vector<double> values, double q);

// Mean, median, p90, p99 and population std (numpy ddof=0) in milliseconds of values in seconds.
// All zero for an empty set.
LatencyStats latency_stats(const std::vector<double>& values_s);

// TTFT = first_token - arrival; E2EL = finish - arrival; TPOT = (E2EL - TTFT) / (output - 1) for
// requests with more than one output token only; ITL = every inter-token gap of every request
// (itls_s, seconds). Throughputs divide by duration_s (0 when duration_s <= 0).
BenchmarkSummary summarize(const std::vector<RequestRecord>& requests, const LatencySamples& itls,
                           double duration_s);
BenchmarkSummary summarize(const std::vector<RequestRecord>& requests,
                           const std::vector<double>& itls_s, double duration_s);

// Service-level objectives for goodput (vllm bench serve --goodput): a request is good when
// every given limit holds (0 = no limit). Seconds.
struct Slo {
  double ttft_s = 0, tpot_s = 0, e2el_s = 0;
  bool any() const { return ttft_s > 0 || tpot_s > 0 || e2el_s > 0; }
};

// Requests meeting the SLOs; TPOT as in summarize() (single-token requests meet any TPOT limit).
std::int64_t good_requests(const std::vector<RequestRecord>& requests, const Slo& slo);

// The text block `vllm bench serve` prints (Mean/Median/P99 of TTFT, TPOT, ITL and E2EL),
// byte for byte the same layout; every line ends in '\n'.
std::string format_table(const BenchmarkSummary& summary);

// Flat object: completed, duration_s, total_input_tokens, total_output_tokens,
// request_throughput, output_throughput, total_token_throughput and, for m in ttft, tpot, itl,
// e2el: mean_<m>_ms, median_<m>_ms, p90_<m>_ms, p99_<m>_ms, std_<m>_ms.
nlohmann::json to_json(const BenchmarkSummary& summary);

}  // namespace ks::serving
