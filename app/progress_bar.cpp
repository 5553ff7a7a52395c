#include "app/progress_bar.hpp"

#include <algorithm>

#include "app/simulation.hpp"

namespace ks::app {

std::string progress_line(double sim_s, std::int64_t completed, std::int64_t total, int width) {
  char buf[160];
  if (total <= 0) {
    std::snprintf(buf, sizeof buf, "%lld requests done  sim %.2f s", static_cast<long long>(completed), sim_s);
    return buf;
  }
  const double fraction = std::clamp(static_cast<double>(completed) / static_cast<double>(total), 0.0, 1.0);
  const int filled = static_cast<int>(fraction * width);
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '#') +
                    std::string(static_cast<std::size_t>(width - filled), '.') + "]";
  std::snprintf(buf, sizeof buf, " %3.0f%%  %lld/%lld requests  sim %.2f s", fraction * 100.0,
                static_cast<long long>(completed), static_cast<long long>(total), sim_s);
  return bar + buf;
}

ProgressBar::ProgressBar(std::FILE* out, double interval_s)
    : out_(out),
      interval_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(interval_s))) {}

void ProgressBar::update(double sim_s, std::int64_t completed, std::int64_t total, bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - last_ < interval_) return;
  last_ = now;
  drawn_ = true;
  std::fprintf(out_, "\r\033[K%s", progress_line(sim_s, completed, total).c_str());
  std::fflush(out_);
}

void ProgressBar::finish() {
  if (!drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

void run_with_progress(Simulation& sim, ProgressBar& bar) { run_in_slices(sim, &bar, nullptr); }

bool run_in_slices(Simulation& sim, ProgressBar* bar, bool (*stop)()) {
  using clock = std::chrono::steady_clock;
  double slice_s = 1e-3;  // simulated seconds per slice, adapted to the run's speed
  if (bar) bar->update(sim.now_seconds(), sim.completed(), sim.expected_requests(), true);
  bool done = false;
  while (!(stop && stop())) {
    const auto start = clock::now();
    if (sim.run_until(sim.now_seconds() + slice_s)) {
      done = true;
      break;
    }
    const double wall = std::chrono::duration<double>(clock::now() - start).count();
    if (wall < 0.05) slice_s = std::min(slice_s * 2, 3600.0);
    else if (wall > 0.2) slice_s = std::max(slice_s / 2, 1e-6);
    if (bar) bar->update(sim.now_seconds(), sim.completed(), sim.expected_requests());
  }
  if (bar) bar->finish();
  return done;
}

}  // namespace ks::app
