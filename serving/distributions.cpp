#include "serving/distributions.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ks::serving {

ArrivalProcess::ArrivalProcess(std::string kind, double rate, double cv)
    : kind_(std::move(kind)), rate_(rate), shape_(1.0 / (cv * cv)) {
  if (!(rate > 0)) throw std::invalid_argument("arrival rate must be positive");
  if (!(cv > 0)) throw std::invalid_argument("arrival cv must be positive");
}

double ArrivalProcess::next_gap(util::Rng& rng) const {
  if (kind_ == "constant") return 1.0 / rate_;
  if (kind_ == "gamma") return rng.gamma(shape_, 1.0 / (rate_ * shape_));  // mean 1/rate, CV 1/sqrt(shape)
  return rng.exponential(rate_);
}

LengthDistribution::LengthDistribution(std::string kind, double mean, double std, std::int64_t min, std::int64_t max)
    : kind_(std::move(kind)), mean_(mean), std_(std), min_(std::max<std::int64_t>(1, min)), max_(max) {
  if (max_ > 0 && max_ < min_) throw std::invalid_argument("length max is below min");
  if (kind_ == "lognormal") {
    if (!(mean > 0)) throw std::invalid_argument("a lognormal length needs a positive mean");
    sigma_ = std::sqrt(std::log1p((std * std) / (mean * mean)));
    mu_ = std::log(mean) - 0.5 * sigma_ * sigma_;
  }
  if (kind_ == "uniform" && max_ <= 0) throw std::invalid_argument("a uniform length needs max");
}

std::int64_t LengthDistribution::sample(util::Rng& rng) const {
  double v = mean_;
  if (kind_ == "uniform") return rng.uniform_int(min_, max_);
  if (kind_ == "normal") v = rng.normal(mean_, std_);
  if (kind_ == "lognormal") v = std::exp(rng.normal(mu_, sigma_));
  auto n = static_cast<std::int64_t>(std::llround(v));
  n = std::max(n, min_);
  if (max_ > 0) n = std::min(n, max_);
  return n;
}

}  // namespace ks::serving
