#pragma once
// Measured serving benchmarks beside the simulator's predictions (`kernelsight compare`):
// reads a `vllm bench serve --save-result` JSON or an SGLang `bench_serving --output-file` JSONL
// line into the vllm-bench metric names the simulator's summary.json uses, and tabulates
// measured vs predicted with the relative error. Pure C++ (no SystemC); docs/configuration.md,
// "kernelsight compare".
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ks::app {

struct MeasuredResult {
  std::string format;  // "vllm bench serve" or "sglang bench_serving"
  std::string where;   // "file" (one JSON object) or "file:N" (line N of a JSONL file)
  // Metric name (vllm-bench spelling: duration, completed, request_throughput, mean_ttft_ms,
  // p99_e2el_ms, ...) -> value. SGLang's *_e2e_latency_ms and total_throughput are renamed.
  std::map<std::string, double> metrics;
};

// `line`: which line of a JSON-lines file (1-based; 0 = the last one, the latest run, since
// SGLang appends). Throws config::ConfigError naming the file (and line), the key and what was
// expected: unreadable, not JSON, not an object, a metric that is not a number, or none of the
// known metric keys (neither format).
MeasuredResult read_measured_result(const std::string& path, int line = 0);
MeasuredResult parse_measured_result(const std::string& text, const std::string& origin, int line = 0);

// A simulator summary (summary.json of `run`, or serving::to_json of a BenchmarkSummary) in the
// same metric names (duration_s becomes duration).
std::map<std::string, double> summary_metrics(const nlohmann::json& summary);

struct ComparisonRow {
  std::string metric;  // "mean_ttft_ms"
  double measured = 0;
  double predicted = 0;
  // (predicted - measured) / measured x 100; nullopt when measured is 0.
  std::optional<double> error_pct;
};

// One row per metric present in both, in a fixed order (counts, throughputs, then TTFT, TPOT,
// ITL, E2EL: mean, median, p90, p99, std).
std::vector<ComparisonRow> compare_metrics(const std::map<std::string, double>& measured,
                                           const std::map<std::string, double>& predicted);

// The table `kernelsight compare` prints, ending with the mean absolute error of the rows.
std::string format_comparison(const std::vector<ComparisonRow>& rows);

}  // namespace ks::app
