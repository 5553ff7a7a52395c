#include "kernels/efficiency_fit.hpp"

#include <Eigen/Dense>
#include <unsupported/Eigen/NonLinearOptimization>
#include <unsupported/Eigen/NumericalDiff>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "kernels/attention_backend.hpp"
#include "kernels/boost_selection.hpp"

namespace ks::kernels {
namespace {

struct Sample {
  KernelFeatures f;
  double log_seconds;
  double weight;
  std::size_t family = 0;  // shape family (below), numbered in sorted order
};

// Parameter vector layout: wc[0..nc) | wm[0..nm) | log_t0 | log_p_minus_1 | log_theta |
// log_launch_per_wave | log_chain_cycles | floor_narrow | log_softmax_cycles | log_reread_cycles |
// log_warm_l2_cycles [| log_quant_bytes].
// `ctas_per_kv_head`: the form of decode's waves the parameters are fitted in (not fitted);
// `floor_in_cycles`: whether log_t0 is the floor at kFloorReferenceClockHz of a cycle count;
// `split_k_launch`: whether a GEMM that splits K is priced split (ClassParams::split_k_launch; not fitted);
// `quant`: whether log_quant_bytes is fitted (some row quantises its input, KernelFeatures::t_quant);
// else it stays at `fixed_quant` (the prior's), and the other classes' vectors keep their size.
struct Layout {
  std::size_t nc, nm;
  bool ctas_per_kv_head = false;
  bool floor_in_cycles = false;
  bool split_k_launch = false;
  bool quant = false;
  double fixed_quant = ClassParams::kNoQuant;
  std::size_t size() const { return nc + nm + 9 + (quant ? 1 : 0); }
  Eigen::VectorXd pack(const ClassParams& p) const {
    Eigen::VectorXd v(static_cast<Eigen::Index>(size()));
    for (std::size_t i = 0; i < nc; ++i) v[static_cast<Eigen::Index>(i)] = p.wc[i];
    for (std::size_t i = 0; i < nm; ++i) v[static_cast<Eigen::Index>(nc + i)] = p.wm[i];
    v[static_cast<Eigen::Index>(nc + nm)] = p.log_t0;
    v[static_cast<Eigen::Index>(nc + nm + 1)] = p.log_p_minus_1;
    v[static_cast<Eigen::Index>(nc + nm + 2)] = p.log_theta;
    v[static_cast<Eigen::Index>(nc + nm + 3)] = p.log_launch_per_wave;
    v[static_cast<Eigen::Index>(nc + nm + 4)] = p.log_chain_cycles;
    v[static_cast<Eigen::Index>(nc + nm + 5)] = p.floor_narrow;
    v[static_cast<Eigen::Index>(nc + nm + 6)] = p.log_softmax_cycles;
    v[static_cast<Eigen::Index>(nc + nm + 7)] = p.log_reread_cycles;
    v[static_cast<Eigen::Index>(nc + nm + 8)] = p.log_warm_l2_cycles;
    if (quant) v[static_cast<Eigen::Index>(nc + nm + 9)] = p.log_quant_bytes;
    return v;
  }
  ClassParams unpack(const Eigen::VectorXd& v) const {
    ClassParams p;
    p.wc.assign(kMaxFeatures, 0.0);
    p.wm.assign(kMaxFeatures, 0.0);
    for (std::size_t i = 0; i < nc; ++i) p.wc[i] = v[static_cast<Eigen::Index>(i)];
    for (std::size_t i = 0; i < nm; ++i) p.wm[i] = v[static_cast<Eigen::Index>(nc + i)];
    p.log_t0 = v[static_cast<Eigen::Index>(nc + nm)];
    // Keep p in a sane range (1.5 .. 30): beyond it the soft maximum is a hard one anyway.
    p.log_p_minus_1 = std::clamp(v[static_cast<Eigen::Index>(nc + nm + 1)], std::log(0.5), std::log(29.0));
    p.log_theta = std::clamp(v[static_cast<Eigen::Index>(nc + nm + 2)], std::log(0.01), std::log(1e4));
    p.log_launch_per_wave =
        std::clamp(v[static_cast<Eigen::Index>(nc + nm + 3)], ClassParams::kNoLaunchPerWave, std::log(10.0));
    p.log_chain_cycles = std::clamp(v[static_cast<Eigen::Index>(nc + nm + 4)], ClassParams::kNoChain, std::log(1e5));
    p.floor_narrow = std::clamp(v[static_cast<Eigen::Index>(nc + nm + 5)], -3.0, 3.0);
    p.log_softmax_cycles = std::clamp(v[static_cast<Eigen::Index>(nc + nm + 6)], ClassParams::kNoSoftmax, std::log(1e3));
    p.log_reread_cycles = std::clamp(v[static_cast<Eigen::Index>(nc + nm + 7)], ClassParams::kNoReread, std::log(1e3));
    p.log_warm_l2_cycles = std::clamp(v[static_cast<Eigen::Index>(nc + nm + 8)], ClassParams::kNoReread, std::log(1e3));
    // Up to 64 bytes per element: far beyond any pass's read and write of 16-bit values.
    p.log_quant_bytes = quant ? std::clamp(v[static_cast<Eigen::Index>(nc + nm + 9)], ClassParams::kNoQuant, std::log(64.0))
                              : fixed_quant;
    p.ctas_per_kv_head = ctas_per_kv_head;
    p.floor_in_cycles = floor_in_cycles;
    p.split_k_launch = split_k_launch;
    return p;
  }
};

// The functor shape Eigen's NumericalDiff and LevenbergMarquardt expect.
struct FunctorBase {
  using Scalar = double;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
  using InputType = Eigen::VectorXd;
  using ValueType = Eigen::VectorXd;
  using JacobianType = Eigen::MatrixXd;
  FunctorBase(int inputs, int values) : inputs_(inputs), values_(values) {}
  int inputs() const { return inputs_; }
  int values() const { return values_; }
  int inputs_, values_;
};

struct Residuals : FunctorBase {
  const std::vector<Sample>* samples;
  Layout layout;
  Eigen::VectorXd prior;
  Eigen::VectorXd ridge_sqrt;  // per parameter; a huge value freezes it at the prior

  Residuals(const std::vector<Sample>* s, Layout l, Eigen::VectorXd pr, Eigen::VectorXd ridge)
      : FunctorBase(static_cast<int>(l.size()), static_cast<int>(s->size() + l.size())),
        samples(s),
        layout(l),
        prior(std::move(pr)),
        ridge_sqrt(ridge.cwiseSqrt()) {}

  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& fvec) const {
    const ClassParams p = layout.unpack(x);
    const std::size_t n = samples->size();
    for (std::size_t i = 0; i < n; ++i) {
      const Sample& s = (*samples)[i];
      const double pred = EfficiencyModel::parametric_seconds(s.f, p);
      fvec[static_cast<Eigen::Index>(i)] = std::sqrt(s.weight) * (std::log(pred) - s.log_seconds);
    }
    for (std::size_t j = 0; j < layout.size(); ++j) {
      const auto jj = static_cast<Eigen::Index>(j);
      fvec[static_cast<Eigen::Index>(n + j)] = ridge_sqrt[jj] * (x[jj] - prior[jj]);
    }
    return 0;
  }
};

constexpr double kMaxMemoryEfficiencyFit = 1.25;  // as in efficiency_model.cpp
double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// Levenberg-Marquardt from `start` (with theta replaced by each of `thetas` in turn); the best.
Eigen::VectorXd minimize(const std::vector<Sample>& samples, const Layout& layout, const Eigen::VectorXd& start,
                         const Eigen::VectorXd& ridge, std::initializer_list<double> thetas) {
  Eigen::VectorXd best;
  double best_norm = std::numeric_limits<double>::infinity();
  for (double theta : thetas) {
    Eigen::VectorXd x = start;
    x[static_cast<Eigen::Index>(layout.nc + layout.nm + 2)] = std::log(theta);
    Residuals functor(&samples, layout, x, ridge);
    Eigen::NumericalDiff<Residuals> numeric(functor);
    Eigen::LevenbergMarquardt<Eigen::NumericalDiff<Residuals>> lm(numeric);
    lm.parameters.maxfev = 4000;
    lm.parameters.xtol = 1e-10;
    lm.parameters.ftol = 1e-10;
    lm.minimize(x);
    Eigen::VectorXd residuals(functor.values());
    functor(x, residuals);
    if (residuals.squaredNorm() < best_norm) {
      best_norm = residuals.squaredNorm();
      best = x;
    }
  }
  return best;
}

// The parametric part of one class, fitted on `samples` from the class's prior `params`.
Eigen::VectorXd fit_parametric(const std::vector<Sample>& samples, const Layout& layout, const ClassParams& params,
                               const FitOptions& options, KernelClass cls) {
  const Eigen::VectorXd prior = layout.pack(params);
  const Eigen::Index i_eta_m = static_cast<Eigen::Index>(layout.nc);
  const Eigen::Index i_t0 = static_cast<Eigen::Index>(layout.nc + layout.nm);
  const Eigen::Index i_theta = static_cast<Eigen::Index>(layout.nc + layout.nm + 2);
  const double n = static_cast<double>(samples.size());
  Eigen::VectorXd x;
  if (options.transferable_elementwise && cls >= KernelClass::Norm) {
    // One GPU cannot tell HBM inefficiency from SM-side work: both scale time with bytes. What
    // transfers: kernels that stream at most of the bandwidth stay memory-bound elsewhere; the
    // others are limited by SM work, which scales with SMs x clock, not with bandwidth.
    Eigen::VectorXd ridge = Eigen::VectorXd::Constant(prior.size(), 1e6 * n);  // frozen
    ridge[i_eta_m] = ridge[i_t0] = options.ridge;
    x = minimize(samples, layout, prior, ridge, {std::exp(params.log_theta)});
    if (kMaxMemoryEfficiencyFit * sigmoid(x[i_eta_m]) < 0.75) {
      Eigen::VectorXd start = prior;
      start[i_eta_m] = std::log(0.72 / 0.28);  // 1.25 x sigmoid = 0.9 of the bandwidth
      ridge = Eigen::VectorXd::Constant(prior.size(), 1e6 * n);
      ridge[i_t0] = ridge[i_theta] = options.ridge;
      x = minimize(samples, layout, start, ridge, {1.0, 4.0, 16.0});
    }
  } else {
    // The SM-throughput term has no gradient while it is far below the others: start the
    // search from several values of theta and keep the best fit.
    Eigen::VectorXd ridge = Eigen::VectorXd::Constant(prior.size(), options.ridge * n);
    // Decode attention streams the KV cache: its SM-side rate (bytes per SM-cycle) stays out of
    // the way. Fitted, it settled below the bytes per SM-cycle of HBM of newer GPUs (B200: 27)
    // and made a Blackwell decode bound by it rather than by the bandwidth.
    const bool freeze_theta = options.transferable_decode && cls == KernelClass::AttentionDecode;
    // A prior without the launch's grid-size term starts (and is pulled) from a small one, where
    // it has a gradient.
    Eigen::VectorXd start = prior;
    const Eigen::Index i_lpw = static_cast<Eigen::Index>(layout.nc + layout.nm + 3);
    if (start[i_lpw] <= ClassParams::kNoLaunchPerWave + 1) start[i_lpw] = std::log(0.05);
    // Likewise the dependent-iteration chain: about a hundred cycles per iteration to start.
    const Eigen::Index i_chain = static_cast<Eigen::Index>(layout.nc + layout.nm + 4);
    if (start[i_chain] <= ClassParams::kNoChain + 1) start[i_chain] = std::log(100.0);
    // Attention prefill's softmax: about a tenth of an SM-cycle per query-key pair to start (an
    // exponential at 16 per SM-cycle plus the reductions). Other classes have no such term.
    const Eigen::Index i_softmax = static_cast<Eigen::Index>(layout.nc + layout.nm + 6);
    if (cls == KernelClass::AttentionPrefill && start[i_softmax] <= ClassParams::kNoSoftmax + 1)
      start[i_softmax] = std::log(0.1);
    // A decode's per-query-head re-reads (KernelFeatures::t_reread): about 32 bytes per SM-cycle
    // to start, a rate of L2, where some row has a group too large to pack. Without such rows
    // nothing informs the term: it keeps the prior's rate (off without a prior), so a GPU whose
    // sweep has no large group still prices one. A fit in the older form (query-head waves) has
    // no such term.
    const Eigen::Index i_reread = static_cast<Eigen::Index>(layout.nc + layout.nm + 7);
    const bool rereads = std::any_of(samples.begin(), samples.end(), [](const Sample& s) { return s.f.t_reread > 0; });
    const bool fit_reread = layout.ctas_per_kv_head && rereads;
    if (fit_reread && start[i_reread] <= ClassParams::kNoReread + 1) start[i_reread] = std::log(1.0 / 32.0);
    if (!fit_reread) {
      if (!layout.ctas_per_kv_head) start[i_reread] = ClassParams::kNoReread;
      ridge[i_reread] = 1e6 * n;
    }
    // A warm kernel's L2 reads (KernelFeatures::t_l2: a decode's KV, a GEMM's rotated weights):
    // about 32 bytes per SM-cycle to start, where some row was measured warm in the L2; else the
    // prior's rate (none without one).
    const Eigen::Index i_warm = static_cast<Eigen::Index>(layout.nc + layout.nm + 8);
    const bool warm_rows = std::any_of(samples.begin(), samples.end(), [](const Sample& s) { return s.f.t_l2 > 0; });
    if (warm_rows && start[i_warm] <= ClassParams::kNoReread + 1) start[i_warm] = std::log(1.0 / 32.0);
    if (!warm_rows) ridge[i_warm] = 1e6 * n;
    // A narrow GEMM's own input quantisation (KernelFeatures::t_quant): three bytes per element to
    // start (read 16-bit, write 8-bit), where the prior has none.
    if (layout.quant) {
      const Eigen::Index i_quant = static_cast<Eigen::Index>(layout.nc + layout.nm + 9);
      if (start[i_quant] <= ClassParams::kNoQuant + 1) start[i_quant] = std::log(3.0);
    }
    if (freeze_theta) {
      ridge[i_theta] = 1e6 * n;
      // Nor does its memory efficiency see the log sizes of the keys per sequence and of the
      // sequences (features 2 and 3, kept for files fitted before): held at 0.
      for (const Eigen::Index i : {static_cast<Eigen::Index>(layout.nc + 2), static_cast<Eigen::Index>(layout.nc + 3)}) {
        start[i] = 0.0;
        ridge[i] = 1e6 * n;
      }
      x = minimize(samples, layout, start, ridge, {64.0});
    } else {
      x = minimize(samples, layout, start, ridge, {2.0, 8.0, std::exp(params.log_theta)});
    }
  }
  return x;
}

// The residual's fade beyond the largest fitted work (boost_selection.hpp), probed as an
// extrapolation: the parametric part and the trees are both fitted on the rows up to
// kFadeProbeOctaves below the largest work and predict the rows above, as the full fit will
// predict a larger M than the sweep's. (A parametric part fitted on every row would look better
// above the edge than it will beyond the sweep, and favour a fade.)
ResidualFade probe_residual_fade(const std::vector<Sample>& samples, const Layout& layout, const ClassParams& prior,
                                 const FitOptions& options, KernelClass cls, const std::vector<double>& rows,
                                 const std::vector<double>& weights, const std::vector<std::size_t>& family,
                                 const BoostOptions& boost) {
  double top = -INFINITY;
  for (const Sample& s : samples) top = std::max(top, s.f.xr[0]);
  std::vector<Sample> lower;
  for (const Sample& s : samples)
    if (s.f.xr[0] <= top - kFadeProbeOctaves) lower.push_back(s);
  if (lower.size() < options.min_rows || lower.size() == samples.size()) {
    ResidualFade none;
    none.max_log2_work = top;
    return none;
  }
  const ClassParams lower_params = layout.unpack(fit_parametric(lower, layout, prior, options, cls));
  std::vector<double> targets(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i)
    targets[i] = samples[i].log_seconds - std::log(EfficiencyModel::parametric_seconds(samples[i].f, lower_params));
  return select_residual_fade(rows, KernelFeatures::kResidualDims, targets, weights, family, boost);
}

}  // namespace

// XLA's tables and scripts/microbench/microbench.py (source "pytorch...": torch._scaled_mm on
// inputs already in fp8) time the product alone, without an engine's quantise-and-scale work.
double other_source_flag(const std::string& source) {
  return source.rfind("xla", 0) == 0 || source.rfind("pytorch", 0) == 0 ? 1.0 : 0.0;
}

int replayed_copies(const std::string& source, const Kernel& kernel) {
  const bool aic = source.rfind("aic-", 0) == 0;
  KernelClass cls;
  if (!kernel_class(kernel.op, &cls)) return 0;
  if (cls == KernelClass::AttentionDecode) return aic || source.rfind("vidur", 0) == 0 ? 1 : 0;
  if (cls != KernelClass::Gemm || !aic) return 0;
  if (source.rfind("aic-trtllm-", 0) == 0) return 5;
  if (source.rfind("aic-vllm-", 0) == 0) return kernel.dtype == DType::FP4 ? 1 : 6;
  if (source.rfind("aic-sglang-", 0) == 0) return 6;
  return 0;
}

EfficiencyModel fit_efficiency(const std::vector<Measurement>& rows, const FitOptions& options) {
  EfficiencyModel model = options.prior ? *options.prior : EfficiencyModel();
  std::array<std::vector<Sample>, kNumKernelClasses> by_class;
  std::map<std::pair<std::string, std::string>, std::array<double, kNumKernelClasses>> group_count;
  std::set<std::string> gpus, backends;

  std::vector<std::pair<std::size_t, std::pair<std::string, std::string>>> keys;
  std::array<std::vector<std::string>, kNumKernelClasses> families;
  for (const Measurement& m : rows) {
    const GpuSpec* gpu = find_builtin_gpu(m.gpu);
    if (gpu == nullptr) throw std::invalid_argument("measurement of unknown GPU '" + m.gpu + "'");
    KernelClass cls;
    if (!kernel_class(m.kernel.op, &cls)) continue;
    if (m.kernel.flops > 0 && !gpu->supports(m.kernel.dtype)) continue;
    gpus.insert(m.gpu);
    if (cls == KernelClass::AttentionPrefill || cls == KernelClass::AttentionDecode)
      if (std::string b = attention_backend_of(m.framework, m.kernel_source); !b.empty()) backends.insert(b);
    const auto c = static_cast<std::size_t>(cls);
    const double source = options.rows_are_engine_source ? 0.0 : other_source_flag(m.source);
    const int replayed = options.warm_l2_rows ? replayed_copies(m.source, m.kernel) : 0;
    KernelFeatures f = kernel_features(m.kernel, *gpu, source, true, -1.0, nullptr, replayed);
    // A product-only source timed no quantisation pass, even where its rows stand for the
    // engine's kernels: the pass is fitted on rows that paid it, or not at all.
    if (other_source_flag(m.source) > 0) f.t_quant = 0;
    by_class[c].push_back({f, std::log(m.seconds), 1.0});
    families[c].push_back(shape_family(m.shape));
    keys.push_back({c, {m.gpu, m.source}});
    group_count[{m.gpu, m.source}][c] += 1.0;
  }
  for (std::size_t c = 0; c < kNumKernelClasses; ++c) {
    std::map<std::string, std::size_t> ids;
    for (const std::string& f : families[c]) ids.emplace(f, 0);
    std::size_t next = 0;
    for (auto& [key, id] : ids) id = next++;
    for (std::size_t i = 0; i < families[c].size(); ++i) by_class[c][i].family = ids[families[c][i]];
  }
  // Equal weight per (GPU, source) group within a class, normalised to a mean weight of 1.
  {
    std::array<std::size_t, kNumKernelClasses> idx{};
    for (const auto& [c, key] : keys) by_class[c][idx[c]++].weight = 1.0 / group_count[key][c];
    for (auto& samples : by_class) {
      double total = 0;
      for (const auto& s : samples) total += s.weight;
      for (auto& s : samples) s.weight *= static_cast<double>(samples.size()) / total;
    }
  }

  for (std::size_t c = 0; c < kNumKernelClasses; ++c) {
    std::vector<Sample>& samples = by_class[c];
    if (samples.size() < options.min_rows) continue;
    ClassParams& params = model.params(static_cast<KernelClass>(c));
    // Decode's form: the cross-gen fit's, or the prior's (a target fit refines its cross-gen prior
    // in the prior's form; files fitted before the form keep theirs).
    const bool decode = static_cast<KernelClass>(c) == KernelClass::AttentionDecode;
    const bool attention = decode || static_cast<KernelClass>(c) == KernelClass::AttentionPrefill;
    const Layout layout{samples.front().f.nc, samples.front().f.nm,
                        decode && (options.transferable_decode || params.ctas_per_kv_head),
                        (attention && options.attention_floor_in_cycles) || params.floor_in_cycles,
                        (static_cast<KernelClass>(c) == KernelClass::Gemm && options.gemm_split_k) ||
                            params.split_k_launch,
                        options.quantisation_term &&
                            std::any_of(samples.begin(), samples.end(), [](const Sample& s) { return s.f.t_quant > 0; }),
                        params.log_quant_bytes};
    const ClassParams prior_params = params;
    const Eigen::VectorXd x = fit_parametric(samples, layout, params, options, static_cast<KernelClass>(c));
    params = layout.unpack(x);
    params.fitted = true;
    params.residual = BoostedTrees();
    if (options.residual_trees) {
      const std::size_t d = KernelFeatures::kResidualDims;
      std::vector<double> rows(samples.size() * d), targets(samples.size()), weights(samples.size());
      std::vector<std::size_t> family(samples.size());
      for (std::size_t i = 0; i < samples.size(); ++i) {
        std::copy(samples[i].f.xr.begin(), samples[i].f.xr.end(), rows.begin() + static_cast<long>(i * d));
        targets[i] = samples[i].log_seconds - std::log(EfficiencyModel::parametric_seconds(samples[i].f, params));
        weights[i] = samples[i].weight;
        family[i] = samples[i].family;
      }
      BoostOptions boost = options.boost;
      if (options.select_residual) {
        params.residual_selection = select_boost_options(rows, d, targets, weights, family);
        if (params.residual_selection.folds > 0) boost = params.residual_selection.options;
        params.residual_fade = probe_residual_fade(samples, layout, prior_params, options, static_cast<KernelClass>(c),
                                                   rows, weights, family, boost);
      }
      params.residual.fit(rows, d, targets, weights, boost);
      if (options.measured_families) {
        std::vector<FamilyMeasurement> deviations;
        deviations.reserve(samples.size());
        for (const Sample& s : samples)
          deviations.push_back({s.f.kernel, s.log_seconds - std::log(EfficiencyModel::predict_seconds(s.f, params))});
        params.measured = select_measured_families(deviations);
      }
    }
  }
  model.trained_on.assign(gpus.begin(), gpus.end());
  model.attention_backends.assign(backends.begin(), backends.end());
  return model;
}

}  // namespace ks::kernels
