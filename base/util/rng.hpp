#pragma once
// Deterministic random numbers. Every component owns its own stream, seeded from the scenario's
// global seed and a stable hash of the component's name, so adding a component never shifts the
// numbers another one draws. The generator (xoshiro256**) and the distributions are our own:
// std:: distributions differ between standard libraries and would break byte-identical outputs.
#include <array>
#include <cstdint>
#include <string_view>

namespace ks::util {

// FNV-1a, 64 bit: stable across platforms and runs (std::hash is not).
std::uint64_t stable_hash(std::string_view text);

class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  // The stream of component `name` under the scenario's global seed.
  static Rng for_component(std::uint64_t global_seed, std::string_view name);

  std::uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  // Uniform integer in [low, high] (inclusive), unbiased.
  std::int64_t uniform_int(std::int64_t low, std::int64_t high);
  // Exponential with the given rate (mean 1/rate).
  double exponential(double rate);
  // Standard normal (Box-Muller, one value per call).
  double normal(double mean, double stddev);
  // Gamma(shape, scale) by Marsaglia-Tsang; mean shape*scale.
  double gamma(double shape, double scale);

 private:
  std::array<std::uint64_t, 4> state_;
};

}  // namespace ks::util
