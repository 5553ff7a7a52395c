#include "serving/latency_samples.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ks::serving {

std::vector<LatencySamples::Run> LatencySamples::sorted_runs() const {
  std::vector<Run> sorted = runs_;
  std::sort(sorted.begin(), sorted.end(), [](const Run& a, const Run& b) { return a.value < b.value; });
  return sorted;
}

double LatencySamples::sorted_percentile(const std::vector<Run>& sorted, std::uint64_t n, double q) {
  // numpy "linear": virtual index (n - 1) * q / 100, then its two-sided lerp (exact at t = 1).
  const double index = static_cast<double>(n - 1) * (q / 100.0);
  const auto below = static_cast<std::uint64_t>(std::floor(index));
  const std::uint64_t above = std::min(below + 1, n - 1);
  const double t = index - static_cast<double>(below);
  auto at = [&](std::uint64_t rank) {
    std::uint64_t seen = 0;
    for (const Run& r : sorted) {
      seen += r.count;
      if (rank < seen) return r.value;
    }
    return sorted.back().value;
  };
  const double a = at(below);
  const double b = at(above);
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

double LatencySamples::percentile(double q) const {
  if (!(q >= 0.0 && q <= 100.0)) throw std::invalid_argument("percentile q must be in [0, 100]");
  if (size_ == 0) return 0.0;
  return sorted_percentile(sorted_runs(), size_, q);
}

LatencyStats LatencySamples::stats() const {
  if (size_ == 0) return LatencyStats{0, 0, 0, 0, 0};
  const double n = static_cast<double>(size_);
  double sum = 0.0;
  for (const Run& r : runs_) sum += r.value * static_cast<double>(r.count);
  const double mean = sum / n;
  double squares = 0.0;
  for (const Run& r : runs_) squares += (r.value - mean) * (r.value - mean) * static_cast<double>(r.count);
  const std::vector<Run> sorted = sorted_runs();
  // vLLM computes the statistics in seconds and scales the results to milliseconds.
  return LatencyStats{mean * 1000.0, sorted_percentile(sorted, size_, 50.0) * 1000.0,
                      sorted_percentile(sorted, size_, 90.0) * 1000.0, sorted_percentile(sorted, size_, 99.0) * 1000.0,
                      std::sqrt(squares / n) * 1000.0};
}

}  // namespace ks::serving
