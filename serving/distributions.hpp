#pragma once
// Inter-arrival times and token lengths for synthetic workloads, drawn from a component's RNG.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/util/rng.hpp"

namespace ks::serving {

// poisson: exponential gaps (CV 1); gamma: gaps with the given coefficient of variation (CV > 1
// is burstier than Poisson, < 1 smoother); constant: every 1/rate.
class ArrivalProcess {
 public:
  ArrivalProcess(std::string kind, double rate, double cv);
  double next_gap(util::Rng& rng) const;

 private:
  std::string kind_;
  double rate_, shape_;
};

// fixed: always `mean`; uniform: integers in [min, max]; normal: N(mean, std); lognormal: with
// that mean and std. Every draw is rounded and clamped to [min, max] (max 0: unbounded).
class LengthDistribution {
 public:
  LengthDistribution(std::string kind, double mean, double std, std::int64_t min, std::int64_t max);
  std::int64_t sample(util::Rng& rng) const;

 private:
  std::string kind_;
  double mean_, std_, mu_ = 0, sigma_ = 0;
  std::int64_t min_, max_;
};

}  // namespace ks::serving
