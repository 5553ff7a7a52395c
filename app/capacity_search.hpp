#pragma once
// The planner's question as a search over simulated runs (pure C++, no SystemC): the highest
// request rate, or the fewest replicas, whose run meets the SLOs. `kernelsight capacity` runs each
// probe in its own process; here the probe is any function, so the search tests without SystemC.
//
// A run MEETS the SLOs when every submitted request completed and, for each limit given, the chosen
// statistic (p99, p90, median or mean) of that metric over the run's requests is at or under it:
// TTFT (time to first token), TPOT (time per output token after the first, requests with more than
// one output token) and E2EL (end-to-end latency), as in summary.json (`<stat>_<metric>_ms`).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serving/metrics.hpp"

namespace ks::app {

struct Verdict {
  bool meets = false;
  std::int64_t completed = 0, submitted = 0;
  double ttft_ms = -1, tpot_ms = -1, e2el_ms = -1;  // the chosen statistic (-1: no such key)
  std::string why;  // the first limit missed ("p99 TTFT 2301.5 ms > 2000 ms"), "" when met
};

// printf of one number ("%.6g", ...), as a string.
std::string format_number(const char* format, double value);

// Valid statistics: p99, p90, median, mean.
const std::vector<std::string>& capacity_statistics();

// Judges a summary.json. Throws std::invalid_argument for an unknown statistic.
Verdict judge(const nlohmann::json& summary, const serving::Slo& slo, const std::string& statistic);

// Rates probed are rounded to 6 significant digits, so that the printed answer is exactly a rate
// that was run.
double round_rate(double rate);

// ---- Steady state ---------------------------------------------------------------------------
// A probe is judged on its steady state, not on the whole run: a run starts empty (no queue, no
// running batch), so an overloaded deployment looks fine on a short run and worse the longer it
// runs. Two things are checked per run (docs/tutorial-planner.md, "Steady-state probes"):
//
// * warm-up and cool-down are left out of the SLO metrics: the measured requests are those arriving
//   in [t_w, t_c], t_w = the later of the arrival of the first `warmup_fraction` of requests and
//   `lifetimes` median decode times (E2EL - TTFT: how long a request stays in the running batch,
//   which queueing does not inflate) after the first arrival (the time a running batch takes to fill), t_c = the arrival that leaves the last `cooldown_fraction` out (those see the load end);
// * stationarity: the number of requests in the system N(t) = arrived - finished (waiting and
//   running) over [t_w, t_c], fitted by least squares. The run is UNSTABLE when N grows by more
//   than `growth_limit` of the arrival rate (slope / rate: the share of arriving requests that pile
//   up) and by more than `noise_sigmas` x its fluctuation over the window (the standard deviation of
//   N around the fitted line, at least sqrt(mean N), the Poisson-like spread of a stable count), and
//   the wait shows it: from the window's first third to its last the median TTFT rises by at least
//   `wait_share` of dN / arrival rate, the extra wait Little's law gives for that growth (a running
//   batch that wanders up near saturation grows N for a while too without anyone waiting longer;
//   a queue that keeps growing makes every later request wait longer).
// A run is LONG ENOUGH when its window is at least `window_lifetimes` median decode times and holds at least
// `min_measured` requests; `capacity` lengthens runs that are not.

// One request as requests.csv gives it (-1: never got there).
struct RequestRecord {
  double arrival_s = -1, finish_s = -1;
  double ttft_ms = -1, tpot_ms = -1, e2el_ms = -1;
};

// Parses requests.csv text (columns by header name). Throws std::runtime_error naming `path` and
// the line for a missing column or a malformed number.
std::vector<RequestRecord> parse_requests_csv(const std::string& text, const std::string& path);

struct SteadyStateOptions {
  double warmup_fraction = 0.2;
  double cooldown_fraction = 0.1;
  double lifetimes = 2.0;         // warm-up: at least this many median decode times
  double window_lifetimes = 4.0;  // measured window: at least this many median decode times
  double growth_limit = 0.02;
  double noise_sigmas = 3.0;
  double wait_share = 0.5;  // ... and the median TTFT rises by at least this share of the growth's wait (dN / rate)
  std::int64_t min_measured = 50;
};

struct SteadyState {
  bool long_enough = false;
  bool stable = true;
  std::int64_t requests = 0, measured = 0;
  double window_start_s = 0, window_end_s = 0;
  bool filled = false;        // the warm-up ends before the cool-down starts (else: growth over the post-warm-up share)
  double lifetime_s = 0;      // median decode time (E2EL - TTFT)
  double arrival_rate = 0;    // measured arrivals per second in the window
  double growth = 0;          // d N / d t over the window, divided by arrival_rate
  double mean_in_system = 0;  // time average of N over the window
  double residual_std = 0;    // standard deviation of N around the fitted line
  double ttft_rise_ms = 0;    // median TTFT of the window's last third - of its first third
  double ttft_ms = -1, tpot_ms = -1, e2el_ms = -1;  // the statistic over the measured requests
  std::string why;  // why not long enough / not stable ("" when both hold)
};

// Throws std::invalid_argument for an unknown statistic.
SteadyState steady_state(const std::vector<RequestRecord>& requests, const std::string& statistic,
                         const SteadyStateOptions& options = {});

// One seed's run of a probe.
struct SeedRun {
  std::int64_t seed = 0;
  std::int64_t completed = 0, submitted = 0;
  double request_throughput = 0;
  SteadyState steady;
  bool meets = false;  // filled by judge_probe
  std::string why;     // filled by judge_probe: the first reason this seed fails ("" when it meets)
};

// A probe's verdict over its seeds.
struct ProbeVerdict {
  bool meets = false;       // every seed: all requests completed, long enough, stable, every limit met with margin
  bool stable = true;       // every seed stable
  bool long_enough = true;  // every seed long enough
  int seeds = 0, seeds_passed = 0;
  double worst_ttft_ms = -1, worst_tpot_ms = -1, worst_e2el_ms = -1;  // over the seeds
  std::string binding;        // the limited metric closest to (or furthest over) its limit: "TTFT", "TPOT", "E2EL"
  double binding_ratio = 0;   // its worst-seed value / its limit
  std::string why;            // "" when met, else the first failing seed's reason ("seed 2: p99 TTFT ...")
};

// Judges the seeds of one probe; fills each run's `meets` and `why`. A seed meets when every
// submitted request completed, its run is long enough and stable, and for each limit the steady
// statistic is at or under (1 - margin) x limit. Throws std::invalid_argument for a margin outside
// [0, 1) or no runs.
ProbeVerdict judge_probe(std::vector<SeedRun>& runs, const serving::Slo& slo, const std::string& statistic,
                         double margin);

struct RateSearch {
  double min = 0;          // requests/s; 0: not given (start at `start`, halve while failing down to start/64)
  double max = 0;          // 0: not given (double while passing, up to start*1024)
  double start = 1;        // where the bracketing starts without --min
  double tolerance = 0.05;  // relative width of the final bracket: stop when hi <= lo*(1+tolerance)
};

struct Probe {
  double value = 0;
  bool meets = false;
};

struct SearchResult {
  double answer = 0;    // the highest value that met the SLOs (rate) / the fewest replicas
  bool at_limit = false;  // the answer is the search's upper limit: the true capacity may be higher
  std::vector<Probe> probes;
};

// Brackets [pass, fail] (doubling from --min or `start`, or halving while it fails), then bisects
// until hi <= lo*(1+tolerance). meets(rate) runs one probe. Throws std::invalid_argument when even
// the lowest rate probed fails, or min >= max.
SearchResult search_rate(const RateSearch& options, const std::function<bool(double)>& meets);

// The fewest replicas in [1, max] that meet the SLOs: doubling from 1 until one passes, then
// bisection, so n passes and n-1 failed (or n == 1). Throws std::invalid_argument when `max` fails.
SearchResult search_replicas(int max, const std::function<bool(int)>& meets);

}  // namespace ks::app
