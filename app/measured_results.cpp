#include "app/measured_results.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "base/config/error.hpp"

namespace ks::app {
namespace {

// The metrics both benchmark clients and the simulator report, in table order.
const std::vector<std::string>& metric_order() {
  static const std::vector<std::string> order = [] {
    std::vector<std::string> o = {"completed",          "total_input_tokens", "total_output_tokens", "duration",
                                  "request_throughput", "output_throughput",  "total_token_throughput"};
    for (const char* m : {"ttft", "tpot", "itl", "e2el"})
      for (const char* s : {"mean", "median", "p90", "p99", "std"}) o.push_back(std::string(s) + "_" + m + "_ms");
    return o;
  }();
  return order;
}

bool is_count(const std::string& metric) {
  return metric == "completed" || metric == "total_input_tokens" || metric == "total_output_tokens" ||
         metric == "duration";
}

// SGLang's spellings -> vllm-bench's.
std::string canonical(const std::string& key) {
  if (key == "total_throughput") return "total_token_throughput";
  const std::string e2e = "_e2e_latency_ms";
  if (key.size() > e2e.size() && key.compare(key.size() - e2e.size(), e2e.size(), e2e) == 0)
    return key.substr(0, key.size() - e2e.size()) + "_e2el_ms";
  return key;
}

bool is_sglang_key(const std::string& key) {
  return key == "total_throughput" || key == "concurrency" || key == "total_output_tokens_retokenized" ||
         key == "output_throughput_retokenized" || key.find("_e2e_latency_ms") != std::string::npos;
}

// Python's json.dumps writes NaN, Infinity and -Infinity (e.g. the std of no samples), which are
// not JSON: read them as null (no value).
std::string without_python_specials(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (const char* word : {"-Infinity", "Infinity", "NaN"}) {
      const std::string w(word);
      if (text.compare(i, w.size(), w) == 0) {
        out += "null";
        i += w.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

int line_of_key(const std::string& text, const std::string& key) {
  const std::size_t at = text.find("\"" + key + "\"");
  if (at == std::string::npos) return 0;
  int line = 1;
  for (std::size_t i = 0; i < at; ++i) line += text[i] == '\n';
  return line;
}

std::string describe(const nlohmann::json& j) {
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array";
  if (j.is_string()) return "the string " + j.dump();
  if (j.is_boolean()) return j.dump();
  return j.dump();
}

const char* kNeither =
    "neither a `vllm bench serve --save-result` JSON nor an SGLang `bench_serving --output-file` JSONL line";

MeasuredResult from_object(const nlohmann::json& j, const std::string& text, const std::string& origin,
                           int jsonl_line) {
  MeasuredResult r;
  r.where = jsonl_line > 0 ? origin + ":" + std::to_string(jsonl_line) : origin;
  const std::set<std::string> known(metric_order().begin(), metric_order().end());
  bool sglang = false;
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) {
    keys.push_back(key);
    sglang |= is_sglang_key(key);
    const std::string name = canonical(key);
    if (known.count(name) == 0 || value.is_null()) continue;
    const config::SourceMark mark{origin, jsonl_line > 0 ? jsonl_line : line_of_key(text, key)};
    if (!value.is_number())
      throw config::ConfigError(mark, key, "expected a number, got " + describe(value));
    const double v = value.get<double>();
    if (!(v >= 0)) throw config::ConfigError(mark, key, "expected a number >= 0, got " + value.dump());
    r.metrics[name] = v;
  }
  if (r.metrics.empty()) {
    std::string some;
    for (std::size_t i = 0; i < keys.size() && i < 8; ++i) some += (i ? ", " : "") + keys[i];
    throw config::ConfigError({origin, jsonl_line}, "",
                              std::string(kNeither) +
                                  ": no metric key (expected keys such as request_throughput, output_throughput, "
                                  "mean_ttft_ms, median_ttft_ms, p99_ttft_ms, mean_tpot_ms, mean_itl_ms); it has " +
                                  (keys.empty() ? std::string("no keys") : some + (keys.size() > 8 ? ", ..." : "")));
  }
  r.format = sglang ? "sglang bench_serving" : "vllm bench serve";
  return r;
}

}  // namespace

MeasuredResult parse_measured_result(const std::string& raw, const std::string& origin, int line) {
  const std::string text = without_python_specials(raw);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw config::ConfigError({origin}, "", std::string("empty file: expected ") + kNeither);
  nlohmann::json whole = nlohmann::json::parse(text, nullptr, false);
  if (!whole.is_discarded()) {
    if (whole.is_array() && !whole.empty() && whole.front().is_object() && whole.front().contains("metric"))
      throw config::ConfigError({origin}, "",
                                std::string(kNeither) +
                                    ": this is vLLM's PyTorch benchmark format (*.pytorch.json); pass the "
                                    "--save-result JSON written beside it");
    if (!whole.is_object())
      throw config::ConfigError({origin}, "", std::string(kNeither) + ": expected a JSON object, got " +
                                                  describe(whole));
    if (line > 1)
      throw config::ConfigError({origin}, "", "--line " + std::to_string(line) + ": the file holds one JSON object");
    return from_object(whole, text, origin, 0);
  }
  // JSON lines: one object per run (SGLang appends each run to its --output-file).
  std::vector<std::pair<int, std::string>> lines;
  std::istringstream in(text);
  std::string l;
  for (int n = 1; std::getline(in, l); ++n)
    if (l.find_first_not_of(" \t\r") != std::string::npos) lines.emplace_back(n, l);
  std::vector<nlohmann::json> parsed;
  for (const auto& [n, content] : lines) {
    try {
      parsed.push_back(nlohmann::json::parse(content));
    } catch (const nlohmann::json::parse_error& e) {
      throw config::ConfigError({origin, n}, "",
                                std::string("not JSON (") + e.what() + "): expected a JSON object, or one per line");
    }
  }
  if (line > static_cast<int>(lines.size()))
    throw config::ConfigError({origin}, "", "--line " + std::to_string(line) + ": the file has " +
                                                std::to_string(lines.size()) + " JSON lines");
  const std::size_t index = line > 0 ? static_cast<std::size_t>(line - 1) : lines.size() - 1;
  const int n = lines[index].first;
  const nlohmann::json& j = parsed[index];
  if (!j.is_object())
    throw config::ConfigError({origin, n}, "", std::string(kNeither) + ": expected a JSON object, got " + describe(j));
  return from_object(j, lines[index].second, origin, n);
}

MeasuredResult read_measured_result(const std::string& path, int line) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config::ConfigError({path}, "", "cannot read file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_measured_result(text.str(), path, line);
}

std::map<std::string, double> summary_metrics(const nlohmann::json& summary) {
  std::map<std::string, double> out;
  const std::set<std::string> known(metric_order().begin(), metric_order().end());
  for (const auto& [key, value] : summary.items()) {
    const std::string name = key == "duration_s" ? "duration" : key;
    if (known.count(name) != 0 && value.is_number()) out[name] = value.get<double>();
  }
  return out;
}

std::vector<ComparisonRow> compare_metrics(const std::map<std::string, double>& measured,
                                           const std::map<std::string, double>& predicted) {
  std::vector<ComparisonRow> rows;
  for (const std::string& m : metric_order()) {
    const auto a = measured.find(m);
    const auto b = predicted.find(m);
    if (a == measured.end() || b == predicted.end()) continue;
    ComparisonRow row{m, a->second, b->second, std::nullopt};
    if (a->second != 0) row.error_pct = (b->second - a->second) / a->second * 100.0;
    rows.push_back(row);
  }
  return rows;
}

std::string format_comparison(const std::vector<ComparisonRow>& rows) {
  std::string out;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-30s %14s %14s %9s\n", "metric", "measured", "predicted", "error");
  out += buf;
  double sum = 0;
  int n = 0;
  for (const ComparisonRow& r : rows) {
    char err[32] = "n/a";
    if (r.error_pct) std::snprintf(err, sizeof err, "%+.1f%%", *r.error_pct);
    std::snprintf(buf, sizeof buf, "%-30s %14.2f %14.2f %9s\n", r.metric.c_str(), r.measured, r.predicted, err);
    out += buf;
    if (r.error_pct && !is_count(r.metric)) {
      sum += std::fabs(*r.error_pct);
      ++n;
    }
  }
  if (n > 0) {
    std::snprintf(buf, sizeof buf, "mean |error| over %d latency and throughput metrics: %.1f%%\n", n, sum / n);
    out += buf;
  }
  return out;
}

}  // namespace ks::app
