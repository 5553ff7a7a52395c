#include "app/capacity_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
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

std::vector<RequestRecord> parse_requests_csv(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::string line;
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::size_t b = 0;
    for (std::size_t e; (e = l.find(',', b)) != std::string::npos; b = e + 1) f.push_back(l.substr(b, e - b));
    f.push_back(l.substr(b));
    return f;
  };
  if (!std::getline(in, line)) throw std::runtime_error(path + ": empty file, expected a requests.csv header");
  const std::vector<std::string> header = split(line);
  const char* names[] = {"arrival_s", "finish_s", "ttft_ms", "tpot_ms", "e2el_ms"};
  std::size_t col[5];
  for (int i = 0; i < 5; ++i) {
    const auto it = std::find(header.begin(), header.end(), names[i]);
    if (it == header.end())
      throw std::runtime_error(path + ":1: no column '" + names[i] + "' (expected the header of requests.csv)");
    col[i] = static_cast<std::size_t>(it - header.begin());
  }
  std::vector<RequestRecord> out;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::vector<std::string> f = split(line);
    double v[5];
    for (int i = 0; i < 5; ++i) {
      std::size_t used = 0;
      try {
        if (col[i] < f.size()) v[i] = std::stod(f[col[i]], &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (col[i] >= f.size() || used != f[col[i]].size())
        throw std::runtime_error(path + ":" + std::to_string(number) + ": column '" + names[i] +
                                 "': expected a number, got '" + (col[i] < f.size() ? f[col[i]] : "") + "'");
    }
    out.push_back({v[0], v[1], v[2], v[3], v[4]});
  }
  return out;
}

namespace {

double statistic_of(std::vector<double> values, const std::string& statistic) {
  if (values.empty()) return -1;
  if (statistic == "mean") {
    double sum = 0;
    for (const double x : values) sum += x;
    return sum / static_cast<double>(values.size());
  }
  const double q = statistic == "p99" ? 99 : statistic == "p90" ? 90 : 50;
  return serving::percentile(std::move(values), q);
}

void check_statistic(const std::string& statistic) {
  const auto& stats = capacity_statistics();
  if (std::find(stats.begin(), stats.end(), statistic) == stats.end())
    throw std::invalid_argument("--percentile " + statistic + ": expected one of p99, p90, median, mean");
}

}  // namespace

SteadyState steady_state(const std::vector<RequestRecord>& requests, const std::string& statistic,
                         const SteadyStateOptions& o) {
  check_statistic(statistic);
  SteadyState s;
  s.requests = static_cast<std::int64_t>(requests.size());
  if (requests.size() < 2) {
    s.why = "only " + std::to_string(requests.size()) + " request(s)";
    return s;
  }
  std::vector<double> arrivals, finishes, e2els;
  for (const RequestRecord& r : requests) {
    arrivals.push_back(r.arrival_s);
    finishes.push_back(r.finish_s >= 0 ? r.finish_s : std::numeric_limits<double>::infinity());
    if (r.e2el_ms >= 0 && r.ttft_ms >= 0) e2els.push_back(r.e2el_ms - r.ttft_ms);
  }
  std::sort(arrivals.begin(), arrivals.end());
  std::sort(finishes.begin(), finishes.end());
  s.lifetime_s = e2els.empty() ? 0 : serving::percentile(e2els, 50) / 1e3;
  const double lifetime_s = s.lifetime_s;
  const std::size_t n = arrivals.size();
  const auto at = [&](double fraction) {
    const auto i = static_cast<std::size_t>(std::floor(fraction * static_cast<double>(n)));
    return arrivals[std::min(i, n - 1)];
  };
  s.window_start_s = std::max(at(o.warmup_fraction), arrivals.front() + o.lifetimes * lifetime_s);
  s.window_end_s = at(1 - o.cooldown_fraction);
  const bool filled = s.window_end_s > s.window_start_s;
  s.filled = filled;
  // Too short to fill: judge the growth on what is left after the warm-up share alone (the caller
  // lengthens the run; a short run's growth is only reported when it is the longest allowed).
  const double t0 = filled ? s.window_start_s : at(o.warmup_fraction), t1 = s.window_end_s;
  const double span = t1 - t0;

  // Metrics over the requests arriving in the window.
  std::vector<double> ttft, tpot, e2el, ttft_first, ttft_last;
  for (const RequestRecord& r : requests) {
    if (r.arrival_s < t0 || r.arrival_s > t1) continue;
    ++s.measured;
    if (r.ttft_ms >= 0 && r.arrival_s < t0 + span / 3) ttft_first.push_back(r.ttft_ms);
    if (r.ttft_ms >= 0 && r.arrival_s > t1 - span / 3) ttft_last.push_back(r.ttft_ms);
    if (r.ttft_ms >= 0) ttft.push_back(r.ttft_ms);
    if (r.tpot_ms >= 0) tpot.push_back(r.tpot_ms);
    if (r.e2el_ms >= 0) e2el.push_back(r.e2el_ms);
  }
  s.ttft_ms = statistic_of(ttft, statistic);
  s.tpot_ms = statistic_of(tpot, statistic);
  s.e2el_ms = statistic_of(e2el, statistic);
  if (!ttft_first.empty() && !ttft_last.empty()) {
    s.ttft_rise_ms = serving::percentile(ttft_last, 50) - serving::percentile(ttft_first, 50);
  }

  // N(t) sampled on a fine even grid over the window, fitted by least squares.
  if (span > 0) {
    const int samples = 512;
    double sum_t = 0, sum_n = 0, sum_tt = 0, sum_tn = 0, sum_nn = 0;
    for (int k = 0; k < samples; ++k) {
      const double t = t0 + span * (k + 0.5) / samples;
      const auto arrived = std::upper_bound(arrivals.begin(), arrivals.end(), t) - arrivals.begin();
      const auto finished = std::upper_bound(finishes.begin(), finishes.end(), t) - finishes.begin();
      const double in_system = static_cast<double>(arrived - finished);
      const double x = t - t0;
      sum_t += x;
      sum_n += in_system;
      sum_tt += x * x;
      sum_tn += x * in_system;
      sum_nn += in_system * in_system;
    }
    const double m = samples;
    const double slope = (m * sum_tn - sum_t * sum_n) / (m * sum_tt - sum_t * sum_t);
    s.mean_in_system = sum_n / m;
    const auto in_window = std::upper_bound(arrivals.begin(), arrivals.end(), t1) -
                           std::lower_bound(arrivals.begin(), arrivals.end(), t0);
    s.arrival_rate = static_cast<double>(in_window) / span;
    s.growth = s.arrival_rate > 0 ? slope / s.arrival_rate : 0;
    const double growth_over_window = slope * span;
    // Fluctuation around the trend: the residual's standard deviation, at least the Poisson-like
    // sqrt(mean) of a stable system's count (a fixed output length makes batches fill and drain in waves).
    const double var_t = sum_tt / m - (sum_t / m) * (sum_t / m);
    const double var_n = sum_nn / m - s.mean_in_system * s.mean_in_system;
    s.residual_std = std::sqrt(std::max(0.0, var_n - slope * slope * var_t));
    const double noise = std::max(std::sqrt(std::max(1.0, s.mean_in_system)), s.residual_std);
    // Little's law: N growing by dN at arrival rate lambda means waits longer by dN / lambda.
    const double expected_rise_ms = growth_over_window / s.arrival_rate * 1e3;
    s.stable = !(s.growth > o.growth_limit && growth_over_window > o.noise_sigmas * noise &&
                 s.ttft_rise_ms >= o.wait_share * expected_rise_ms);
    if (!s.stable)
      s.why = "unstable: requests in the system grow by " + fmt(s.growth * 100) + "% of the arrival rate (" +
              fmt(growth_over_window) + " over the " + fmt(span) + " s window, mean " + fmt(s.mean_in_system) +
              ", fluctuation " + fmt(s.residual_std) + ") and the median TTFT rises by " + fmt(s.ttft_rise_ms) +
              " ms from the window's first to its last third";
  }
  s.long_enough = filled && span >= o.window_lifetimes * lifetime_s && s.measured >= o.min_measured;
  if (!s.long_enough && s.stable)
    s.why = "too short for a steady state: " + std::to_string(s.measured) + " requests measured over " +
            fmt(std::max(0.0, s.window_end_s - s.window_start_s)) + " s, need >= " + std::to_string(o.min_measured) +
            " over >= " + fmt(o.window_lifetimes) + " x the median decode time (" + fmt(lifetime_s) + " s), after a warm-up of " + fmt(o.lifetimes) + " x it";
  return s;
}

ProbeVerdict judge_probe(std::vector<SeedRun>& runs, const serving::Slo& slo, const std::string& statistic,
                         double margin) {
  check_statistic(statistic);
  if (!(margin >= 0 && margin < 1)) throw std::invalid_argument("--margin " + fmt(margin) + ": expected a fraction in [0, 1), e.g. 0.05");
  if (runs.empty()) throw std::invalid_argument("a probe needs at least one seed");
  ProbeVerdict p;
  p.seeds = static_cast<int>(runs.size());
  const struct {
    const char* name;
    double limit_s;
    double SteadyState::*value;
    double ProbeVerdict::*worst;
  } metrics[] = {{"TTFT", slo.ttft_s, &SteadyState::ttft_ms, &ProbeVerdict::worst_ttft_ms},
                 {"TPOT", slo.tpot_s, &SteadyState::tpot_ms, &ProbeVerdict::worst_tpot_ms},
                 {"E2EL", slo.e2el_s, &SteadyState::e2el_ms, &ProbeVerdict::worst_e2el_ms}};
  for (SeedRun& r : runs) {
    r.why.clear();
    for (const auto& m : metrics) p.*m.worst = std::max(p.*m.worst, r.steady.*m.value);
    p.stable = p.stable && r.steady.stable;
    p.long_enough = p.long_enough && r.steady.long_enough;
    if (r.submitted <= 0 || r.completed < r.submitted)
      r.why = std::to_string(r.completed) + " of " + std::to_string(r.submitted) + " requests completed";
    else if (!r.steady.stable || !r.steady.long_enough)
      r.why = r.steady.why;
    else
      for (const auto& m : metrics) {
        if (m.limit_s <= 0) continue;
        const double value = r.steady.*m.value, limit_ms = m.limit_s * 1e3;
        if (value < 0 || value > (1 - margin) * limit_ms) {
          r.why = statistic + " " + m.name + " " + fmt(value) + " ms > " + fmt((1 - margin) * limit_ms) + " ms (" +
                  fmt(limit_ms) + " ms less the " + fmt(margin * 100) + "% margin)";
          if (margin == 0) r.why = statistic + " " + m.name + " " + fmt(value) + " ms > " + fmt(limit_ms) + " ms";
          break;
        }
      }
    r.meets = r.why.empty();
    if (r.meets) ++p.seeds_passed;
    else if (p.why.empty()) p.why = "seed " + std::to_string(r.seed) + ": " + r.why;
  }
  for (const auto& m : metrics) {
    if (m.limit_s <= 0) continue;
    const double ratio = p.*m.worst < 0 ? std::numeric_limits<double>::infinity() : p.*m.worst / (m.limit_s * 1e3);
    if (p.binding.empty() || ratio > p.binding_ratio) {
      p.binding = m.name;
      p.binding_ratio = ratio;
    }
  }
  p.meets = p.seeds_passed == p.seeds;
  return p;
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
