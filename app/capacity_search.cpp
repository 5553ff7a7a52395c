#include "app/capacity_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ks::app {
namespace {
std::string fmt(double v) { return format_number("%.6g", v); }
}  // namespace

std::string format_number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

const std::vector<std::string>& capacity_statistics() {
  static const std::vector<std::string> stats = {"p99", "p90", "median", "mean"};
  return stats;
}

Verdict judge(const nlohmann::json& summary, const serving::Slo& slo, const std::string& statistic) {
  const auto& stats = capacity_statistics();
  if (std::find(stats.begin(), stats.end(), statistic) == stats.end())
    throw std::invalid_argument("--percentile " + statistic + ": expected one of p99, p90, median, mean");
  Verdict v;
  v.completed = summary.value("completed", std::int64_t{0});
  v.submitted = summary.value("submitted", v.completed);
  auto stat = [&](const char* metric) { return summary.value(statistic + "_" + metric + "_ms", -1.0); };
  v.ttft_ms = stat("ttft");
  v.tpot_ms = stat("tpot");
  v.e2el_ms = stat("e2el");
  if (v.submitted <= 0 || v.completed < v.submitted) {
    v.why = std::to_string(v.completed) + " of " + std::to_string(v.submitted) + " requests completed";
    return v;
  }
  const struct {
    const char* name;
    double limit_s, value_ms;
  } checks[] = {{"TTFT", slo.ttft_s, v.ttft_ms}, {"TPOT", slo.tpot_s, v.tpot_ms}, {"E2EL", slo.e2el_s, v.e2el_ms}};
  for (const auto& c : checks) {
    if (c.limit_s <= 0) continue;
    if (c.value_ms < 0 || c.value_ms > c.limit_s * 1e3) {
      v.why = statistic + " " + c.name + " " + fmt(c.value_ms) + " ms > " + fmt(c.limit_s * 1e3) + " ms";
      return v;
    }
  }
  v.meets = true;
  return v;
}

double round_rate(double rate) { return std::stod(fmt(rate)); }

SearchResult search_rate(const RateSearch& o, const std::function<bool(double)>& meets) {
  if (o.tolerance <= 0 || o.tolerance >= 1)
    throw std::invalid_argument("--tolerance " + fmt(o.tolerance) + ": expected a relative width in (0, 1), e.g. 0.05");
  if (o.min < 0 || o.max < 0) throw std::invalid_argument("--min/--max: expected positive rates");
  if (o.min > 0 && o.max > 0 && o.min >= o.max)
    throw std::invalid_argument("--min " + fmt(o.min) + "/s must be below --max " + fmt(o.max) + "/s");
  SearchResult r;
  auto probe = [&](double rate) {
    const bool ok = meets(rate);
    r.probes.push_back({rate, ok});
    return ok;
  };
  const double start = round_rate(o.min > 0 ? o.min : o.max > 0 ? std::min(o.start, o.max) : o.start);
  const double floor = o.min > 0 ? o.min : start / 64;
  const double ceiling = o.max > 0 ? o.max : start * 1024;
  double lo = 0, hi = 0;  // lo passes, hi fails (0: not found yet)
  if (probe(start)) {
    lo = start;
  } else {
    hi = start;
    for (double rate = round_rate(start / 2); lo == 0; rate = round_rate(rate / 2)) {
      if (rate < floor * (1 - 1e-9) || o.min > 0)
        throw std::invalid_argument("the scenario misses the SLOs even at " + fmt(std::min(hi, rate * 2)) +
                                    " req/s (" + (o.min > 0 ? "--min" : "the lowest rate tried") +
                                    "): relax the SLOs or change the deployment");
      if (probe(rate)) lo = rate;
      else hi = rate;
    }
  }
  while (hi == 0) {
    if (lo >= ceiling * (1 - 1e-9)) {
      r.answer = lo;
      r.at_limit = true;
      return r;
    }
    const double rate = round_rate(std::min(lo * 2, ceiling));
    if (probe(rate)) lo = rate;
    else hi = rate;
  }
  while (hi > lo * (1 + o.tolerance)) {
    const double mid = round_rate(std::sqrt(lo * hi));  // geometric: the tolerance is relative
    if (mid <= lo || mid >= hi) break;  // 6 significant digits cannot split it further
    if (probe(mid)) lo = mid;
    else hi = mid;
  }
  r.answer = lo;
  return r;
}

SearchResult search_replicas(int max, const std::function<bool(int)>& meets) {
  if (max < 1) throw std::invalid_argument("--max " + std::to_string(max) + ": expected at least 1 replica");
  SearchResult r;
  auto probe = [&](int n) {
    const bool ok = meets(n);
    r.probes.push_back({static_cast<double>(n), ok});
    return ok;
  };
  int lo = 0, hi = 0;  // lo fails (0: none), hi passes
  for (int n = 1; hi == 0; n = std::min(n * 2, max)) {
    if (probe(n)) hi = n;
    else if (n == max)
      throw std::invalid_argument("the scenario misses the SLOs even with " + std::to_string(max) +
                                  " replicas (--max): raise --max, relax the SLOs or change the deployment");
    else lo = n;
  }
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (probe(mid)) hi = mid;
    else lo = mid;
  }
  r.answer = hi;
  return r;
}

}  // namespace ks::app
