#include "serving/metrics.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace ks::serving {

namespace {
// `values` sorted ascending.
double sorted_percentile(const std::vector<double>& values, double q) {
  // numpy "linear": virtual index (n - 1) * q / 100, then its two-sided lerp (exact at t = 1).
  const double index = static_cast<double>(values.size() - 1) * (q / 100.0);
  const auto below = static_cast<std::size_t>(std::floor(index));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double t = index - static_cast<double>(below);
  const double a = values[below];
  const double b = values[above];
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}
}  // namespace

double percentile(std::vector<double> values, double q) {
  if (!(q >= 0.0 && q <= 100.0)) throw std::invalid_argument("percentile q must be in [0, 100]");
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return sorted_percentile(values, q);
}

LatencyStats latency_stats(const std::vector<double>& values_s) {
  if (values_s.empty()) return LatencyStats{0, 0, 0, 0, 0};
  const double n = static_cast<double>(values_s.size());
  double sum = 0.0;
  for (double v : values_s) sum += v;
  const double mean = sum / n;
  double squares = 0.0;
  for (double v : values_s) squares += (v - mean) * (v - mean);
  // vLLM computes the statistics in seconds and scales the results to milliseconds.
  std::vector<double> sorted = values_s;  // one sort for the three percentiles (ITLs: millions)
  std::sort(sorted.begin(), sorted.end());
  return LatencyStats{mean * 1000.0, sorted_percentile(sorted, 50.0) * 1000.0,
                      sorted_percentile(sorted, 90.0) * 1000.0, sorted_percentile(sorted, 99.0) * 1000.0,
                      std::sqrt(squares / n) * 1000.0};
}

BenchmarkSummary summarize(const std::vector<RequestRecord>& requests,
                           const std::vector<double>& itls_s, double duration_s) {
  LatencySamples itls;
  for (double v : itls_s) itls.add(v);
  return summarize(requests, itls, duration_s);
}

BenchmarkSummary summarize(const std::vector<RequestRecord>& requests, const LatencySamples& itls,
                           double duration_s) {
  std::vector<double> ttfts, tpots, e2els;
  ttfts.reserve(requests.size());
  tpots.reserve(requests.size());
  e2els.reserve(requests.size());
  std::int64_t input = 0;
  std::int64_t output = 0;
  for (const RequestRecord& r : requests) {
    const double ttft = r.first_token_s - r.arrival_s;
    const double e2el = r.finish_s - r.arrival_s;
    ttfts.push_back(ttft);
    e2els.push_back(e2el);
    // The first token's time is TTFT; a single-token request has no TPOT at all.
    if (r.output_tokens > 1)
      tpots.push_back((e2el - ttft) / static_cast<double>(r.output_tokens - 1));
    input += r.prompt_tokens;
    output += r.output_tokens;
  }
  BenchmarkSummary s{};
  s.completed = static_cast<std::int64_t>(requests.size());
  s.duration_s = duration_s;
  s.total_input_tokens = input;
  s.total_output_tokens = output;
  if (duration_s > 0.0) {
    s.request_throughput = static_cast<double>(s.completed) / duration_s;
    s.output_throughput = static_cast<double>(output) / duration_s;
    s.total_token_throughput = static_cast<double>(input + output) / duration_s;
  }
  s.ttft = latency_stats(ttfts);
  s.tpot = latency_stats(tpots);
  s.itl = itls.stats();
  s.e2el = latency_stats(e2els);
  return s;
}

std::int64_t good_requests(const std::vector<RequestRecord>& requests, const Slo& slo) {
  std::int64_t good = 0;
  for (const RequestRecord& r : requests) {
    const double ttft = r.first_token_s - r.arrival_s;
    const double e2el = r.finish_s - r.arrival_s;
    const double tpot = r.output_tokens > 1 ? (e2el - ttft) / static_cast<double>(r.output_tokens - 1) : 0.0;
    if (slo.ttft_s > 0 && ttft > slo.ttft_s) continue;
    if (slo.tpot_s > 0 && tpot > slo.tpot_s) continue;
    if (slo.e2el_s > 0 && e2el > slo.e2el_s) continue;
    ++good;
  }
  return good;
}

namespace {

// Python "{:<40} {:<10}" with an integer.
void int_line(std::string& out, const char* label, std::int64_t value) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%-40s %-10" PRId64 "\n", label, value);
  out += buf;
}

// Python "{:<40} {:<10.2f}".
void float_line(std::string& out, const std::string& label, double value) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-40s %-10.2f\n", label.c_str(), value);
  out += buf;
}

// Python "{s:{c}^{n}}": centred, the odd padding character goes to the right.
void centred_line(std::string& out, std::string_view text, char fill, std::size_t width) {
  const std::size_t pad = text.size() < width ? width - text.size() : 0;
  out.append(pad / 2, fill);
  out += text;
  out.append(pad - pad / 2, fill);
  out += '\n';
}

void metric_block(std::string& out, const char* header, const char* metric,
                  const LatencyStats& stats) {
  centred_line(out, header, '-', 50);
  const std::string name(metric);
  float_line(out, "Mean " + name + " (ms):", stats.mean_ms);
  float_line(out, "Median " + name + " (ms):", stats.median_ms);
  float_line(out, "P99 " + name + " (ms):", stats.p99_ms);
}

void stats_json(nlohmann::json& j, const char* metric, const LatencyStats& stats) {
  const std::string m(metric);
  j["mean_" + m + "_ms"] = stats.mean_ms;
  j["median_" + m + "_ms"] = stats.median_ms;
  j["p90_" + m + "_ms"] = stats.p90_ms;
  j["p99_" + m + "_ms"] = stats.p99_ms;
  j["std_" + m + "_ms"] = stats.std_ms;
}

}  // namespace

std::string format_table(const BenchmarkSummary& s) {
  std::string out;
  centred_line(out, " Serving Benchmark Result ", '=', 50);
  int_line(out, "Successful requests:", s.completed);
  float_line(out, "Benchmark duration (s):", s.duration_s);
  int_line(out, "Total input tokens:", s.total_input_tokens);
  int_line(out, "Total generated tokens:", s.total_output_tokens);
  float_line(out, "Request throughput (req/s):", s.request_throughput);
  float_line(out, "Output token throughput (tok/s):", s.output_throughput);
  float_line(out, "Total Token throughput (tok/s):", s.total_token_throughput);
  metric_block(out, "Time to First Token", "TTFT", s.ttft);
  metric_block(out, "Time per Output Token (excl. 1st token)", "TPOT", s.tpot);
  metric_block(out, "Inter-token Latency", "ITL", s.itl);
  metric_block(out, "End-to-end Latency", "E2EL", s.e2el);
  if (s.spec.enabled) {
    centred_line(out, "Speculative Decoding", '-', 50);
    float_line(out, "Acceptance rate (%):", 100.0 * s.spec.acceptance_rate());
    float_line(out, "Acceptance length:", s.spec.mean_acceptance_length());
    int_line(out, "Drafts:", s.spec.drafts);
    int_line(out, "Draft tokens:", s.spec.draft_tokens);
    int_line(out, "Accepted tokens:", s.spec.accepted);
    float_line(out, "Output tokens per engine step:", s.spec.tokens_per_step());
  }
  out.append(50, '=');
  out += '\n';
  return out;
}

nlohmann::json to_json(const BenchmarkSummary& s) {
  nlohmann::json j;
  j["completed"] = s.completed;
  j["duration_s"] = s.duration_s;
  j["total_input_tokens"] = s.total_input_tokens;
  j["total_output_tokens"] = s.total_output_tokens;
  j["request_throughput"] = s.request_throughput;
  j["output_throughput"] = s.output_throughput;
  j["total_token_throughput"] = s.total_token_throughput;
  stats_json(j, "ttft", s.ttft);
  stats_json(j, "tpot", s.tpot);
  stats_json(j, "itl", s.itl);
  stats_json(j, "e2el", s.e2el);
  return j;
}

}  // namespace ks::serving
