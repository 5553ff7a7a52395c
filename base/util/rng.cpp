#include "base/util/rng.hpp"

#include <cmath>
#include <stdexcept>

namespace ks::util {
namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
constexpr double kTwoPi = 6.283185307179586476925286766559;
}  // namespace

std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Rng::Rng(std::uint64_t seed) {
  for (auto& word : state_) word = splitmix64(seed);
}

Rng Rng::for_component(std::uint64_t global_seed, std::string_view name) {
  std::uint64_t mix = global_seed;
  const std::uint64_t a = splitmix64(mix);
  return Rng(a ^ stable_hash(name));
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

std::int64_t Rng::uniform_int(std::int64_t low, std::int64_t high) {
  if (high < low) throw std::invalid_argument("uniform_int: high < low");
  const std::uint64_t span = static_cast<std::uint64_t>(high - low) + 1;
  if (span == 0) return static_cast<std::int64_t>(next_u64());  // the full 64-bit range
  // Rejection sampling removes the modulo bias.
  const std::uint64_t limit = (~std::uint64_t{0}) - ((~std::uint64_t{0}) % span);
  std::uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return low + static_cast<std::int64_t>(x % span);
}

double Rng::exponential(double rate) {
  if (!(rate > 0)) throw std::invalid_argument("exponential: rate must be > 0");
  return -std::log1p(-uniform()) / rate;
}

double Rng::normal(double mean, double stddev) {
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

double Rng::gamma(double shape, double scale) {
  if (!(shape > 0) || !(scale > 0)) throw std::invalid_argument("gamma: shape and scale must be > 0");
  if (shape < 1.0) {
    // Boost to shape+1 and scale back (Marsaglia-Tsang's note).
    const double u = uniform();
    return gamma(shape + 1.0, scale) * std::pow(u > 0 ? u : 1e-300, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal(0.0, 1.0);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * scale;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v * scale;
  }
}

}  // namespace ks::util
