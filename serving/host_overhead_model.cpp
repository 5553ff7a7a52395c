#include "serving/host_overhead_model.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <Eigen/Dense>

#include "base/util/csv.hpp"

namespace ks::serving {
namespace {
// The CSV column of each phase, in HostPhase order.
constexpr std::array<const char*, kHostPhases> kColumns{"schedule_median", "prepare_inputs_e2e_median",
                                                       "sampler_e2e_median", "process_model_outputs_median"};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

const char* host_phase_name(HostPhase phase) {
  switch (phase) {
    case HostPhase::Schedule: return "schedule";
    case HostPhase::PrepareInputs: return "prepare_inputs";
    case HostPhase::Sampler: return "sampler";
    case HostPhase::ProcessOutputs: return "process_outputs";
  }
  return "?";
}

const char* tp_term_name(TpTerm term) {
  switch (term) {
    case TpTerm::Linear: return "tp-1";
    case TpTerm::Log2: return "log2(tp)";
    case TpTerm::Distributed: return "[tp>1]";
  }
  return "?";
}

double tp_feature(TpTerm term, int tp) {
  switch (term) {
    case TpTerm::Linear: return tp - 1.0;
    case TpTerm::Log2: return std::log2(static_cast<double>(std::max(tp, 1)));
    case TpTerm::Distributed: return tp > 1 ? 1.0 : 0.0;
  }
  return 0;
}

double HostOverheadSample::total() const {
  double t = 0;
  for (double s : seconds) t += s;
  return t;
}

std::vector<HostOverheadSample> read_host_overheads(const std::string& path) {
  const kernels::CsvTable table = kernels::CsvTable::read_file(path);
  std::vector<HostOverheadSample> out;
  out.reserve(table.rows());
  for (std::size_t r = 0; r < table.rows(); ++r) {
    HostOverheadSample s;
    s.model = table.cell(r, "model_name");
    s.batch_size = static_cast<int>(table.required_number(r, "batch_size"));
    s.tp = static_cast<int>(table.required_number(r, "tensor_parallel_degree"));
    if (s.batch_size < 1 || s.tp < 1) table.fail(r, "batch_size", "batch_size and TP must be >= 1");
    for (std::size_t p = 0; p < kHostPhases; ++p) s.seconds[p] = table.required_number(r, kColumns[p]) * 1e-3;
    out.push_back(std::move(s));
  }
  return out;
}

double HostOverheadModel::phase_seconds(HostPhase phase, std::int64_t sequences, int tp) const {
  const LinearPhase& c = phases[static_cast<std::size_t>(phase)];
  const double seqs = static_cast<double>(sequences), f = tp_feature(tp_term, tp);
  return std::max(0.0, c.base_s + c.per_seq_s * seqs + (c.tp_s + c.per_seq_tp_s * seqs) * f);
}

double HostOverheadModel::before_gpu_seconds(std::int64_t sequences, int tp) const {
  return phase_seconds(HostPhase::Schedule, sequences, tp) + phase_seconds(HostPhase::PrepareInputs, sequences, tp);
}

double HostOverheadModel::after_gpu_seconds(std::int64_t sequences, int tp) const {
  return phase_seconds(HostPhase::Sampler, sequences, tp) + phase_seconds(HostPhase::ProcessOutputs, sequences, tp);
}

double HostOverheadModel::total_seconds(std::int64_t sequences, int tp) const {
  return before_gpu_seconds(sequences, tp) + after_gpu_seconds(sequences, tp);
}

HostOverheadModel fit_host_overheads(const std::vector<HostOverheadSample>& samples, TpTerm tp_term) {
  if (samples.size() < 3) throw std::invalid_argument("host overhead fit needs at least 3 samples");
  const Eigen::Index n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd x(n, 4);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& s = samples[static_cast<std::size_t>(i)];
    x(i, 0) = 1.0;
    x(i, 1) = s.batch_size;
    x(i, 2) = tp_feature(tp_term, s.tp);
    x(i, 3) = s.batch_size * tp_feature(tp_term, s.tp);
  }
  // A single TP degree leaves the TP columns constant or zero: drop them rather than fit noise.
  const bool one_tp = std::all_of(samples.begin(), samples.end(),
                                  [&](const HostOverheadSample& s) { return s.tp == samples.front().tp; });
  const Eigen::MatrixXd design = one_tp ? Eigen::MatrixXd(x.leftCols(2)) : x;
  const auto qr = design.colPivHouseholderQr();
  HostOverheadModel model;
  model.tp_term = tp_term;
  for (std::size_t p = 0; p < kHostPhases; ++p) {
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) y(i) = samples[static_cast<std::size_t>(i)].seconds[p];
    const Eigen::VectorXd w = qr.solve(y);
    model.phases[p] = {w(0), w(1), one_tp ? 0.0 : w(2), one_tp ? 0.0 : w(3)};
  }
  return model;
}

FitErrors fit_errors(const HostOverheadModel& model, const std::vector<HostOverheadSample>& samples) {
  FitErrors e;
  e.samples = samples.size();
  if (samples.empty()) return e;
  std::vector<double> total;
  for (const auto& s : samples) {
    for (std::size_t p = 0; p < kHostPhases; ++p) {
      const double pred = model.phase_seconds(static_cast<HostPhase>(p), s.batch_size, s.tp);
      e.phase_mape[p] += std::abs(pred - s.seconds[p]) / s.seconds[p];
    }
    total.push_back(std::abs(model.total_seconds(s.batch_size, s.tp) - s.total()) / s.total());
  }
  const double n = static_cast<double>(samples.size());
  for (double& m : e.phase_mape) m /= n;
  for (double t : total) e.total_mape += t / n;
  e.total_median_ape = median(total);
  e.total_max_ape = *std::max_element(total.begin(), total.end());
  return e;
}

FitErrors leave_one_model_out(const std::vector<HostOverheadSample>& samples, TpTerm tp_term) {
  std::set<std::string> models;
  for (const auto& s : samples) models.insert(s.model);
  FitErrors pooled;
  std::vector<double> total;
  for (const std::string& held : models) {
    std::vector<HostOverheadSample> train, test;
    for (const auto& s : samples) (s.model == held ? test : train).push_back(s);
    const HostOverheadModel m = fit_host_overheads(train, tp_term);
    for (const auto& s : test) {
      for (std::size_t p = 0; p < kHostPhases; ++p)
        pooled.phase_mape[p] +=
            std::abs(m.phase_seconds(static_cast<HostPhase>(p), s.batch_size, s.tp) - s.seconds[p]) / s.seconds[p];
      total.push_back(std::abs(m.total_seconds(s.batch_size, s.tp) - s.total()) / s.total());
    }
  }
  pooled.samples = total.size();
  if (total.empty()) return pooled;
  const double n = static_cast<double>(total.size());
  for (double& m : pooled.phase_mape) m /= n;
  for (double t : total) pooled.total_mape += t / n;
  pooled.total_median_ape = median(total);
  pooled.total_max_ape = *std::max_element(total.begin(), total.end());
  return pooled;
}

}  // namespace ks::serving
