#include "kernels/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ks::kernels {

ErrorStats error_stats(const std::vector<double>& e) {
  ErrorStats s;
  s.n = e.size();
  if (e.empty()) return s;
  double sum = 0;
  for (double v : e) sum += v;
  s.mape = sum / static_cast<double>(e.size());
  std::vector<double> sorted = e;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t mid = sorted.size() / 2;
  s.median_ape = sorted.size() % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
  return s;
}

ValidationReport evaluate(const std::vector<Measurement>& rows, const Predictor& tier, const Predictor& roofline) {
  return evaluate(evaluate_rows(rows, tier, roofline));
}

std::vector<ScoredRow> evaluate_rows(const std::vector<Measurement>& rows, const Predictor& tier,
                                     const Predictor& roofline) {
  std::vector<ScoredRow> scored;
  scored.reserve(rows.size());
  for (const Measurement& m : rows) {
    ScoredRow s;
    s.label = m.label.empty() ? m.shape.op : m.label;
    // Class and dtype: "gemm bf16", "gemm fp8", "attention_prefill bf16", "elementwise fp16".
    s.group = kernel_group(m.kernel.op);
    s.cls = (s.group == "attention" ? m.shape.op : s.group) + " " + std::string(dtype_name(m.shape.dtype));
    s.measured = m.seconds;
    s.tier = tier(m);
    s.roofline = roofline(m);
    scored.push_back(std::move(s));
  }
  return scored;
}

ValidationReport evaluate(const std::vector<ScoredRow>& rows) {
  struct Errors {
    std::vector<double> tier, roof;
  };
  std::map<std::string, Errors> labels, groups, classes;
  Errors all;
  for (const ScoredRow& m : rows) {
    const double et = 100.0 * std::fabs(m.tier - m.measured) / m.measured;
    const double er = 100.0 * std::fabs(m.roofline - m.measured) / m.measured;
    for (Errors* e : {&labels[m.label], &groups[m.group], &classes[m.cls], &all}) {
      e->tier.push_back(et);
      e->roof.push_back(er);
    }
  }
  ValidationReport r;
  for (const auto& [k, e] : labels) r.by_label[k] = {error_stats(e.tier), error_stats(e.roof)};
  for (const auto& [k, e] : groups) r.by_group[k] = {error_stats(e.tier), error_stats(e.roof)};
  for (const auto& [k, e] : classes) r.by_class[k] = {error_stats(e.tier), error_stats(e.roof)};
  r.overall = {error_stats(all.tier), error_stats(all.roof)};
  return r;
}

std::string format_report(const ValidationReport& r, const std::string& tier_name) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-26s %7s %12s %12s %12s %12s\n", "operator", "rows", "tier MAPE%",
                "tier med%", "roof MAPE%", "roof med%");
  out += line;
  auto row = [&](const std::string& name, const std::pair<ErrorStats, ErrorStats>& s) {
    std::snprintf(line, sizeof line, "%-26s %7zu %12.2f %12.2f %12.2f %12.2f\n", name.c_str(), s.first.n,
                  s.first.mape, s.first.median_ape, s.second.mape, s.second.median_ape);
    out += line;
  };
  for (const auto& [k, s] : r.by_label) row(k, s);
  out += "\n";
  for (const auto& [k, s] : r.by_class) row("{" + k + "}", s);
  for (const auto& [k, s] : r.by_group) row("[" + k + "]", s);
  row("[all]", r.overall);
  std::snprintf(line, sizeof line, "kernel MAPE: tier %s %.2f%% roofline %.2f%%\n", tier_name.c_str(),
                r.overall.first.mape, r.overall.second.mape);
  out += line;
  return out;
}

}  // namespace ks::kernels
