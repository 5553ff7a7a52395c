#pragma once
// A multiset of latencies stored as runs of equal values. Inter-token latencies come a batch at
// a time: every decode sequence of a step that also ran in the previous step has the same gap,
// so a run of 10^8 ITLs (a million requests) collapses to about one run per engine step and the
// statistics stay exact (numpy's percentile and population std over the expanded samples).
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace ks::serving {

struct LatencyStats {
  double mean_ms, median_ms, p90_ms, p99_ms, std_ms;
};

class LatencySamples {
 public:
  void add(double value_s, std::uint64_t count = 1) {
    if (count == 0) return;
    if (!runs_.empty() && runs_.back().value == value_s) runs_.back().count += count;
    else {
      Run& run = runs_.emplace_back();  // in place: a braced temporary stalls store forwarding
      run.value = value_s;
      run.count = count;
    }
    size_ += count;
  }
  std::uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t runs() const { return runs_.size(); }

  // Mean, median, p90, p99 and population std in milliseconds; all zero when empty.
  LatencyStats stats() const;
  // numpy.percentile (linear) of the samples, q in [0, 100]; 0 when empty.
  double percentile(double q) const;

 private:
  struct Run {
    double value;
    std::uint64_t count;
  };
  std::vector<double> percentiles(std::initializer_list<double> qs) const;
  // Writes the values of sorted sample ranks [ranks, ranks_end) (ascending) of the runs [lo, hi),
  // whose first sample has rank `base`; reorders the runs.
  static void select_ranks(Run* lo, Run* hi, std::uint64_t base, const std::uint64_t* ranks,
                           const std::uint64_t* ranks_end, double* values, int depth);

  std::vector<Run> runs_;
  std::uint64_t size_ = 0;
};

}  // namespace ks::serving
