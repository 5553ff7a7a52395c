#pragma once
// The learned-efficiency kernel model:
//
//   t = t0 (1 + s waves) + ((t_c / eta_c)^p + (t_m / eta_m)^p + (t_s / theta)^p + (t_l L)^p)^(1/p)
//
// with t_c = FLOPs / peak(dtype) and t_m = bytes / HBM bandwidth of the GPU the kernel runs on
// (the roofline terms), t_s = bytes / (SMs x clock) the time the SMs need to move the bytes at one
// byte per SM-cycle (small memory-bound kernels are limited by issue rate and latency, not by
// HBM, and that limit scales with SMs and clock, not with bandwidth), theta the bytes per
// SM-cycle the class achieves, a latency floor t0, a soft maximum of exponent p (the transitions
// between bounds are gradual, not corners), and efficiencies
//
//   eta = sigmoid(w . x(kernel))
//
// where x are features that carry across GPUs: log sizes of the problem (M, N, K, tokens, bytes)
// and the source that measured it. Each kernel class has its own parameters. Because every
// quantity is relative to the GPU's own peak and bandwidth, parameters fitted on some GPUs
// predict another one from its spec sheet alone (the cross-generation tier); re-fitting them on a
// sweep of the target GPU gives the target tier. See docs/kernel-model.md.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels/boost_selection.hpp"
#include "kernels/boosted_trees.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/kernel.hpp"
#include "kernels/moe_correction.hpp"
#include "kernels/measured_families.hpp"
#include "kernels/roofline.hpp"

namespace ks::kernels {

enum class KernelClass {
  Gemm,
  AttentionPrefill,
  AttentionDecode,
  Norm,
  Activation,
  Add,
  Rope,
  Embedding,
  Count
};
constexpr std::size_t kNumKernelClasses = static_cast<std::size_t>(KernelClass::Count);

std::string_view class_name(KernelClass c);
// Collectives have no class: the interconnect prices them.
bool kernel_class(OpKind op, KernelClass* out);

constexpr std::size_t kMaxFeatures = 8;

// The largest grouped-query group (query heads per KV head) that decode kernels packing the group
// into one CTA take: TensorRT-LLM's XQA supports groups of 1 to 16 (its support check, e.g. as
// vendored in alibaba/rtp-llm's 3rdparty/xqa). A larger group falls back to a kernel with one
// CTA per query head, which reads its KV head's keys and values once per query head.
constexpr double kMaxPackedDecodeGroup = 16.0;

// The clock at which a floor counted in cycles is written down (ClassParams::floor_in_cycles).
constexpr double kFloorReferenceClockHz = 1.5e9;

// The share of the L2 a replayed kernel's bytes may fill and still be read from it warm: on one
// H200 (50 MB in the catalogue) a streaming read ran 1.5x faster warm at 40 MiB and no faster at
// 51 MiB (scripts/microbench/l2_bandwidth.py, docs/validation-hardware.md).
constexpr double kWarmL2Share = 0.75;

// Features of one kernel for its class: x_c (compute efficiency) and x_m (memory efficiency).
struct KernelFeatures {
  KernelClass cls;
  std::size_t nc = 0, nm = 0;
  std::array<double, kMaxFeatures> xc{};
  std::array<double, kMaxFeatures> xm{};
  double t_compute = 0;  // roofline compute time on the GPU, s
  double t_memory = 0;   // roofline memory time on the GPU, s
  double t_issue = 0;    // bytes / (SMs x clock): the SM-side time at one byte per SM-cycle, s
  // Waves of the kernel's CTAs over the SMs (GEMM: 128x128 output tiles; attention: (sequence,
  // head, 128 queries); elementwise: 64 KiB of traffic each): the grid-size term of the launch.
  double grid_waves = 0;
  // The longest chain of dependent iterations one CTA runs, over the clock: the time at one cycle
  // per iteration, s. GEMM: K in steps of 64 (over split_k in the split form); attention: the
  // keys of a sequence in steps of 64 (decode: over the split that fills the SMs); else 0.
  double t_chain = 0;
  // A 16-bit dense GEMM whose output tiles leave SMs idle splits its K loop over this many CTAs
  // (at least 512 of K each, no more CTAs than SMs), and a split one reduces the partial sums in a
  // second kernel. 1: no split. Read by calibrations in the split-K form (ClassParams::split_k_launch).
  double split_k = 1;
  // Attention's query-key pairs (over every query head) over SMs x clock: the time at one pair per
  // SM-cycle. Each pair costs an exponential on the SM's special-function units (16 per SM-cycle on
  // every NVIDIA GPU since Volta) plus the softmax's scaling, max and sum on the CUDA cores, work
  // the tensor cores do not speed up. 0 for other classes.
  double t_softmax = 0;
  // Decode attention: query heads per KV head (1 otherwise). Kernels that pack a grouped-query
  // group into one CTA run (sequence, KV head) CTAs (ClassParams::ctas_per_kv_head).
  double kv_group = 1;
  // Decode attention whose group is beyond what packing kernels take (kMaxPackedDecodeGroup): the
  // KV bytes read once per query head over SMs x clock, the time at one byte per SM-cycle. The
  // fallback's CTAs re-read their KV head's keys and values, mostly from L2. 0 otherwise.
  double t_reread = 0;
  // A kernel timed warm (a benchmark replaying it, kernel_features' `replayed_copies`) whose
  // replayed bytes fit in kWarmL2Share of the L2 (decode attention: its KV, read again by every
  // replay; a GEMM: its weights times the copies the benchmark rotates, plus its activations):
  // the bytes over SMs x clock, the time at one byte per SM-cycle, priced at the class's warm-L2
  // rate (ClassParams::log_warm_l2_cycles) when that is faster than the HBM term. 0 otherwise: every
  // simulated kernel is cold (a serving step streams other layers' weights and KV through the L2
  // between two uses of one layer's).
  double t_l2 = 0;
  // An engine's narrow-dtype GEMM (fp8, fp4) that quantises its own 16-bit input: the input's
  // elements over the HBM bandwidth, the time at one byte per element. The quantisation is a pass
  // over the activations before the product (read 16-bit, write narrow, then the GEMM reads them),
  // priced at the class's fitted bytes per element (ClassParams::log_quant_bytes) and added to the
  // body: it grows with M x K whatever N is, where the product grows with M x N x K, so it carries
  // a router's N = 32 as much as a wide projection's. 0 for 16-bit GEMMs, for sources that time
  // the product alone (XLA, torch._scaled_mm), for inputs quantised by a kernel of their own, and
  // for a MoE's grouped GEMMs.
  double t_quant = 0;
  // log2 of the dtype's peak over the 16-bit peak (1 for fp8 on Hopper; 0 for 16-bit kernels, and
  // for a source whose fp8 GEMMs take quantised inputs: the narrow terms are an engine's
  // quantise-and-scale work).
  double narrow = 0;
  // kFloorReferenceClockHz over the GPU's clock: how a floor counted in cycles scales
  // (ClassParams::floor_in_cycles).
  double floor_clock_scale = 1;
  // Features of the learned residual: log2 of M (x batch), N, K, arithmetic intensity over the
  // ridge point, bytes over L2, roofline time in us; for GEMMs then the waves of output tiles
  // (64x64 .. 256x128) over the SMs and how full the last wave is, the fit of M, N and K to tiles
  // of 64, 128 and 256, the split-K that fills the SMs and the K per split, and weights and
  // activations over L2. GEMM libraries quantise work into tiles and waves and pick the tile per
  // shape: the residual learns the resulting staircase from whichever tiling explains the
  // target's measurements. Other classes: waves of CTAs over the SMs; decode attention also the
  // grouped-query group (log2 query heads per KV head), (sequence, KV head) and (sequence,
  // query head) CTAs per SM, log2 of the KV cache's bytes per element, and log2 of the keys per
  // sequence and of the KV bytes one (sequence, KV head) streams.
  static constexpr std::size_t kResidualDims = 38;
  std::array<double, kResidualDims> xr{};
  Kernel kernel{};  // the kernel itself: its shape family may have been measured
};

// `vendor_source` flags measurements whose source behaves differently from the engine being
// modelled (0 for the serving engine's own kernels). Throws std::invalid_argument for a kernel
// without a class (collectives) or a dtype the GPU has no peak for. `residual` false leaves xr
// zero (a class without residual trees does not read it; its dozen log2 calls were half the price
// of a kernel nothing remembers, such as a step's attention).
// `without_engine_quantisation`: 1 when the kernel's narrow-dtype product runs without an
// engine's quantise-and-scale work around it (XLA's tables time the product alone), which zeroes
// the narrow-dtype feature and floor; negative (the default): the same as `other_source`.
// `architecture`: the spec whose tensor-core width names the architecture (prefill attention's
// efficiency feature): the calibrated GPU when `gpu` is a what-if variant of it (a spec change
// moves the roofline terms, not the design of the kernels written for the GPU); null: `gpu`.
// `replayed_copies`: the kernel is priced as a benchmark that replays it ran it (KernelFeatures::t_l2),
// rotating that many copies of a GEMM's weights (replayed_copies in efficiency_fit.hpp); 0 for
// everything simulated.
KernelFeatures kernel_features(const Kernel& kernel, const GpuSpec& gpu, double other_source = 0.0,
                               bool residual = true, double without_engine_quantisation = -1.0,
                               const GpuSpec* architecture = nullptr, int replayed_copies = 0);

// f(x) remembered for the last x (compared bit for bit, so the result is exactly f(x)).
class LastValue {
 public:
  template <class F>
  double operator()(double x, F f) const {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    if (!known_ || bits != bits_) {
      bits_ = bits;
      y_ = f(x);
      known_ = true;
    }
    return y_;
  }

 private:
  mutable bool known_ = false;
  mutable std::uint64_t bits_ = 0;
  mutable double y_ = 0;
};

struct ClassParams {
  std::vector<double> wc;  // compute-efficiency weights (size nc)
  std::vector<double> wm;  // memory-efficiency weights (size nm)
  double log_t0 = std::log(3e-6);
  double log_p_minus_1 = std::log(3.0);  // p = 4
  double log_theta = std::log(64.0);      // bytes per SM-cycle; 64 keeps the term out of the way
  // AMALI's launch latency, KLL = k + s x grid size: the floor grows by this fraction of t0 per wave
  // of CTAs over the SMs (KernelFeatures::grid_waves). exp(-30): none (files from before it).
  double log_launch_per_wave = kNoLaunchPerWave;
  static constexpr double kNoLaunchPerWave = -30.0;
  // GEMM: a kernel that splits K (KernelFeatures::split_k) runs 1/split of the K loop per CTA, as
  // many more CTAs, and a second launch that reduces the partial sums. false: the K loop whole
  // and one launch (files from before it).
  bool split_k_launch = false;
  // Cycles per iteration of the kernel's chain of dependent iterations (KernelFeatures::t_chain):
  // a memory round trip that pipelining does not hide. exp(-30): none (files from before it).
  double log_chain_cycles = kNoChain;
  static constexpr double kNoChain = -30.0;
  // The floor of a narrow-dtype kernel (fp8 on a GPU with a 16-bit rate half as fast) is
  // exp(floor_narrow x KernelFeatures::narrow) times the 16-bit one: engines' fp8 GEMMs quantise
  // their input and apply scales around the matrix product (more launches, a longer epilogue).
  // Engine-source kernels only (KernelFeatures::narrow is 0 for XLA's tables, whose fp8 GEMMs take
  // quantised inputs).
  double floor_narrow = 0;
  // SM-cycles per query-key pair of attention's softmax (KernelFeatures::t_softmax). exp(-30) or
  // less: none (files from before it, classes without a softmax).
  double log_softmax_cycles = kNoSoftmax;
  static constexpr double kNoSoftmax = -30.0;
  // Decode attention: the launch's waves and the memory efficiency's waves count (sequence, KV
  // head) CTAs, as kernels that pack a grouped-query group run them; false: (sequence, query
  // head) CTAs (files from before it, and the target tier's fits).
  bool ctas_per_kv_head = false;
  // The floor t0 is a number of cycles: t0_us is its time at kFloorReferenceClockHz, and a GPU
  // with another clock scales it (KernelFeatures::floor_clock_scale). false: seconds on every GPU
  // (files from before it, and the classes whose floor stays in seconds).
  bool floor_in_cycles = false;
  // SM-cycles per byte a decode re-reads per query head (KernelFeatures::t_reread). exp(-30) or
  // less: none (files from before it, classes without it).
  double log_reread_cycles = kNoReread;
  static constexpr double kNoReread = -30.0;
  // SM-cycles per byte a warm decode reads from the L2 (KernelFeatures::t_l2); kNoReread: none.
  double log_warm_l2_cycles = kNoReread;
  // HBM bytes per input element of a narrow GEMM's own quantisation (KernelFeatures::t_quant);
  // kNoQuant or less: none (files from before it, classes without it).
  double log_quant_bytes = kNoQuant;
  static constexpr double kNoQuant = -30.0;
  bool fitted = false;
  BoostedTrees residual;  // log(measured / parametric); empty = none
  BoostSelection residual_selection;  // how the residual's settings were chosen (folds 0: not by CV)
  // exp() of the log parameters and the two sigmoids, for the values they had last time: the
  // parameters are the same for every kernel a simulation prices, and so is the efficiency whose
  // features are constant (attention's memory side in prefill, compute side in decode). Five of
  // the six exp() calls of a kernel no memo knows. Keyed by value, so fitting may change the
  // parameters freely.
  LastValue exp_t0, exp_p_minus_1, exp_theta, exp_launch_per_wave, exp_chain, exp_narrow, exp_softmax, exp_reread, exp_warm_l2, exp_quant,
      sigmoid_c, sigmoid_m;
  ResidualFade residual_fade;         // how the residual extrapolates beyond the fitted work
  // The sweep's own measurements of its shape families (measured_families.hpp); empty: none kept.
  MeasuredFamilies measured;
};

// The parts of the parametric time: each bound's derated time, the latency floor and the
// soft-max exponent. body() combines the bounds and adds the input's quantisation pass; binding()
// names the largest of them (the caller decides whether the floor, a launch bound, exceeds the
// body).
struct ParametricTerms {
  double compute = 0, memory = 0, sm = 0;  // t_c / eta_c, t_m / eta_m, t_s / theta (s)
  double latency = 0;                      // t_chain x cycles per iteration (s)
  double softmax = 0;                      // t_softmax x cycles per pair (s): SM-side, bound `sm`
  double reread = 0;                       // t_reread x cycles per byte (s): SM-side, bound `sm`
  double quant = 0;                        // t_quant x bytes per element (s): a pass before the product
  // memory is the faster of t_m / eta_m and, for a warm kernel in L2, t_l2 x cycles per byte
  double floor = 0;                        // t0 (s)
  double power = 4;
  double body() const;
  Bound binding() const;
};

class EfficiencyModel {
 public:
  EfficiencyModel();  // every class at its prior (modest efficiencies, 3 us floor)

  // `calibrated`: the spec the model's residual and measured families were learned on, when
  // `gpu` is a what-if variant of it (overridden fields); null when `gpu` is that GPU.
  // `source`: the measuring source's flag (efficiency_fit.hpp, other_source_flag) when pricing a
  // measured kernel as its source ran it: 1 prices a narrow-dtype kernel without an engine's
  // quantise-and-scale work (the source's efficiency offsets, nuisance terms of the fit, are not
  // applied). 0, an engine's own kernels, for everything simulated.
  // `replayed_copies`: price the kernel as a benchmark that replays it measured it (kernel_features).
  KernelCost cost(const Kernel& kernel, const GpuSpec& gpu, const GpuSpec* calibrated = nullptr,
                  double source = 0.0, int replayed_copies = 0) const;
  double predict_seconds(const KernelFeatures& f) const;
  // The parametric part alone, and with the class's residual applied.
  static double parametric_seconds(const KernelFeatures& f, const ClassParams& p);
  static ParametricTerms parametric_terms(const KernelFeatures& f, const ClassParams& p);
  // A parametric time t times the class's residual and measured-family deviation.
  static double corrected_seconds(double t, const KernelFeatures& f, const ClassParams& p);
  static double predict_seconds(const KernelFeatures& f, const ClassParams& p);

  ClassParams& params(KernelClass c) { return params_[static_cast<std::size_t>(c)]; }
  const ClassParams& params(KernelClass c) const { return params_[static_cast<std::size_t>(c)]; }

  std::string description;             // what it was fitted on
  std::vector<std::string> trained_on;  // GPUs in the training data
  // The attention backends (attention_backend.hpp) of the attention rows it was fitted on, sorted;
  // empty: none known (files from before, sources without backends).
  std::vector<std::string> attention_backends;
  // A backend's own attention calibration (`calibrate --attention-backend`): that backend's name;
  // only its fitted attention classes are meant to be used (with_attention_classes_of).
  std::string attention_backend;
  // Grouped expert GEMMs as the engine's fused MoE runs them, fitted on whole MoE layers
  // (moe_fit.hpp); empty: priced as dense GEMMs.
  MoeGemmCorrection moe_gemm;

  // This model with the fitted attention classes (prefill, decode) of `backend_model` instead of
  // its own.
  EfficiencyModel with_attention_classes_of(const EfficiencyModel& backend_model) const;

  // YAML round trip (calibration files). Throws SpecError (a user-input error, exit 2) naming the file on errors.
  std::string to_yaml() const;
  static EfficiencyModel from_yaml(const std::string& text, const std::string& origin);
  static EfficiencyModel load(const std::string& path);

 private:
  std::array<ClassParams, kNumKernelClasses> params_;
};

}  // namespace ks::kernels
