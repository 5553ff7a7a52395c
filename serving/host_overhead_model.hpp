#pragma once
// Host CPU time per engine step as a function of the batch (sequences) and the TP degree, fitted by
// least squares to measured per-step CPU overheads (data/cpu_overheads/, Vidur's profiles of a
// vLLM-derived engine). Each host phase is linear in the batch:
//   t = a + b·sequences + (c + d·sequences)·f(TP).
// Pure C++ (no SystemC) so the fit, the leave-one-model-out check (`kernelsight fit-host`) and the
// `fitted` engine overheads (serving/host_overheads.hpp) share it.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ks::serving {

// The measured phases of one step, in the order the host runs them.
enum class HostPhase { Schedule, PrepareInputs, Sampler, ProcessOutputs };
constexpr std::size_t kHostPhases = 4;
const char* host_phase_name(HostPhase phase);

// How TP enters the fit. The A40 samples jump once TP > 1 (workers talk over Ray), so the
// candidates differ mostly in how they treat TP 4 and 8; `kernelsight fit-host` compares them.
enum class TpTerm { Linear /* TP-1 */, Log2 /* log2 TP */, Distributed /* 1 if TP > 1 */ };
const char* tp_term_name(TpTerm term);
double tp_feature(TpTerm term, int tp);

// One measured step: seconds per phase.
struct HostOverheadSample {
  std::string model;
  int batch_size = 0;
  int tp = 1;
  std::array<double, kHostPhases> seconds{};
  double total() const;
};

// Reads a CSV in the format of data/cpu_overheads/*.csv (times in ms, `*_median` columns).
// Throws kernels::CsvError with file and line for a malformed file.
std::vector<HostOverheadSample> read_host_overheads(const std::string& path);

// t = base + per_seq·sequences + (tp + per_seq_tp·sequences)·f(TP). With the default f = [TP > 1]
// that is one line for a single GPU and one for distributed workers: on the A40 host the
// per-sequence cost more than doubles once workers must be coordinated, and one shared slope
// drove the single-GPU intercepts negative.
struct LinearPhase {
  double base_s = 0, per_seq_s = 0, tp_s = 0, per_seq_tp_s = 0;
};

struct HostOverheadModel {
  TpTerm tp_term = TpTerm::Distributed;
  std::array<LinearPhase, kHostPhases> phases{};

  // Never negative: an extrapolated phase is clamped at zero.
  double phase_seconds(HostPhase phase, std::int64_t sequences, int tp) const;
  double before_gpu_seconds(std::int64_t sequences, int tp) const;  // schedule + prepare inputs
  double after_gpu_seconds(std::int64_t sequences, int tp) const;   // sampler + process outputs
  double total_seconds(std::int64_t sequences, int tp) const;
};

// Least squares per phase on [1, batch_size, f(TP), batch_size·f(TP)]. Throws std::invalid_argument with
// fewer than 3 samples.
HostOverheadModel fit_host_overheads(const std::vector<HostOverheadSample>& samples, TpTerm tp_term);

// Relative errors |pred - meas| / meas of each phase and of the step total.
struct FitErrors {
  std::array<double, kHostPhases> phase_mape{};
  double total_mape = 0, total_median_ape = 0, total_max_ape = 0;
  std::size_t samples = 0;
};
FitErrors fit_errors(const HostOverheadModel& model, const std::vector<HostOverheadSample>& samples);

// Refits without each model in turn and scores the left-out model's rows; errors pooled over all.
FitErrors leave_one_model_out(const std::vector<HostOverheadSample>& samples, TpTerm tp_term);

}  // namespace ks::serving
