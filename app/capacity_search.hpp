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
