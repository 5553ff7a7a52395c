#include "serving/latency_samples.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ks::serving {

namespace {
// numpy "linear": virtual index (n - 1) * q / 100 between the samples of sorted ranks `below` and
// `above`, then its two-sided lerp (exact at t = 1).
struct PercentileRanks {
  std::uint64_t below, above;
  double t;
};
PercentileRanks percentile_ranks(std::uint64_t n, double q) {
  const double index = static_cast<double>(n - 1) * (q / 100.0);
  const auto below = static_cast<std::uint64_t>(std::floor(index));
  return {below, std::min(below + 1, n - 1), index - static_cast<double>(below)};
}
double lerp(const PercentileRanks& r, double a, double b) {
  const double diff = b - a;
  return r.t >= 0.5 ? b - diff * (1.0 - r.t) : a + diff * r.t;
}
}  // namespace

// A quickselect weighted by the runs' counts, for several ranks at once: each partition step
// sends every wanted rank to its side. Expected linear in the runs (a sort of the ~one run per
// engine step of a long run's ITLs was a few percent of the whole simulation); ranges that stop
// shrinking are sorted instead, so the worst case stays n log n.
void LatencySamples::select_ranks(Run* lo, Run* hi, std::uint64_t base, const std::uint64_t* ranks,
                                  const std::uint64_t* ranks_end, double* values, int depth) {
  while (ranks != ranks_end) {
    if (hi - lo <= 16 || depth == 0) {
      std::sort(lo, hi, [](const Run& a, const Run& b) { return a.value < b.value; });
      std::uint64_t seen = base;
      for (const Run* r = lo; r != hi && ranks != ranks_end; ++r) {
        seen += r->count;
        while (ranks != ranks_end && *ranks < seen) {
          *values++ = r->value;
          ++ranks;
        }
      }
      return;
    }
    --depth;
    const double a = lo->value, b = lo[(hi - lo) / 2].value, c = hi[-1].value;
    const double pivot = std::max(std::min(a, b), std::min(std::max(a, b), c));  // median of three
    Run* const less_end = std::partition(lo, hi, [pivot](const Run& r) { return r.value < pivot; });
    Run* const equal_end = std::partition(less_end, hi, [pivot](const Run& r) { return !(pivot < r.value); });
    std::uint64_t less = 0, equal = 0;
    for (const Run* r = lo; r != less_end; ++r) less += r->count;
    for (const Run* r = less_end; r != equal_end; ++r) equal += r->count;
    const std::uint64_t* split = std::lower_bound(ranks, ranks_end, base + less);
    select_ranks(lo, less_end, base, ranks, split, values, depth);
    values += split - ranks;
    for (ranks = split; ranks != ranks_end && *ranks < base + less + equal; ++ranks) *values++ = pivot;
    lo = equal_end;
    base += less + equal;
  }
}

// Each value of `qs` as numpy.percentile over the expanded samples.
std::vector<double> LatencySamples::percentiles(std::initializer_list<double> qs) const {
  std::vector<std::uint64_t> ranks;
  for (double q : qs) {
    const PercentileRanks r = percentile_ranks(size_, q);
    ranks.push_back(r.below);
    ranks.push_back(r.above);
  }
  std::vector<std::uint64_t> wanted = ranks;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::vector<double> values(wanted.size());
  std::vector<Run> runs = runs_;
  int depth = 8;
  for (std::size_t n = runs.size(); n > 1; n /= 2) depth += 2;
  select_ranks(runs.data(), runs.data() + runs.size(), 0, wanted.data(), wanted.data() + wanted.size(), values.data(),
               depth);
  auto value = [&](std::uint64_t rank) {
    return values[static_cast<std::size_t>(std::lower_bound(wanted.begin(), wanted.end(), rank) - wanted.begin())];
  };
  std::vector<double> out;
  for (double q : qs) {
    const PercentileRanks r = percentile_ranks(size_, q);
    out.push_back(lerp(r, value(r.below), value(r.above)));
  }
  return out;
}

double LatencySamples::percentile(double q) const {
  if (!(q >= 0.0 && q <= 100.0)) throw std::invalid_argument("percentile q must be in [0, 100]");
  if (size_ == 0) return 0.0;
  return percentiles({q}).front();
}

LatencyStats LatencySamples::stats() const {
  if (size_ == 0) return LatencyStats{0, 0, 0, 0, 0};
  const double n = static_cast<double>(size_);
  double sum = 0.0;
  for (const Run& r : runs_) sum += r.value * static_cast<double>(r.count);
  const double mean = sum / n;
  double squares = 0.0;
  for (const Run& r : runs_) squares += (r.value - mean) * (r.value - mean) * static_cast<double>(r.count);
  const std::vector<double> p = percentiles({50.0, 90.0, 99.0});
  // vLLM computes the statistics in seconds and scales the results to milliseconds.
  return LatencyStats{mean * 1000.0, p[0] * 1000.0, p[1] * 1000.0, p[2] * 1000.0, std::sqrt(squares / n) * 1000.0};
}

}  // namespace ks::serving
