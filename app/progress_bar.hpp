#pragma once
// A one-line progress bar on stderr for long runs: simulated time and requests completed out of
// the total. The wall clock only paces the redraws (a few per second); nothing it shows goes
// into the results.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ks::app {

class Simulation;

// "[#######.............]  412/1000 requests  sim 37.20 s"; total 0 (unknown): no bar.
std::string progress_line(double sim_s, std::int64_t completed, std::int64_t total, int width = 30);

class ProgressBar {
 public:
  explicit ProgressBar(std::FILE* out, double interval_s = 0.25);
  // Redraws when `interval_s` of wall time has passed since the last redraw (or when forced).
  void update(double sim_s, std::int64_t completed, std::int64_t total, bool force = false);
  // Erases the line so later messages start clean.
  void finish();

 private:
  std::FILE* out_;
  std::chrono::steady_clock::duration interval_;
  std::chrono::steady_clock::time_point last_{};
  bool drawn_ = false;
};

// Runs the simulation in slices of simulated time sized to take about a tenth of a second of wall
// time each, updating `bar` between them. The results equal those of Simulation::run().
void run_with_progress(Simulation& sim, ProgressBar& bar);
// The same with an optional bar, stopping early once `stop()` is true between two slices.
// Returns true when the simulation ran to its end.
bool run_in_slices(Simulation& sim, ProgressBar* bar, bool (*stop)());

}  // namespace ks::app
