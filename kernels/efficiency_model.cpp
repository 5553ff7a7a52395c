#include "kernels/efficiency_model.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/spec_error.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ks::kernels {
namespace {

// log2 of a size, scaled so typical values lie in [0, ~3].
double l2(double x) { return std::log2(std::max(x, 1.0)) / 10.0; }

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// Memory efficiency may exceed 1 a little: small working sets are served from L2.
constexpr double kMaxMemoryEfficiency = 1.25;

// log2 of a count of at least one.
double lg(double x) { return std::log2(std::max(x, 1.0)); }

// How much of the padded tiles a dimension fills (1: a multiple of the tile).
double tile_fit(double size, double tile) { return size / (std::ceil(size / tile) * tile); }

// How much faster the kernel's dtype runs than 16-bit on this GPU (log2 of the peak ratio: 1 for
// fp8 on Hopper, 0 for bf16). The same SMs feed a tensor rate twice as high from the same shared
// memory and registers: measured fp8 GEMMs reach about 0.8 of the fraction of peak bf16 ones
// reach, on every GPU that has both (H100, H200, B200, L40S).
double narrow_dtype(const Kernel& k, const GpuSpec& gpu) {
  if (!(k.flops > 0) || !gpu.supports(DType::BF16)) return 0.0;
  return std::max(0.0, std::log2(gpu.peak(k.dtype) / gpu.peak(DType::BF16)));
}

// The GEMM's parametric narrow-dtype term, from its dtype's `narrow_dtype`: an fp4 GEMM (NVFP4
// on Blackwell, 2) gets the GPU's fp8 value (1 where it has no fp8 peak). The engine's
// quantise-and-scale work around an fp4 product is the kind fp8's is, and no generation left out
// of a fit can teach an extrapolation beyond fp8 (docs/kernel-model.md, "fp4 GEMMs").
double gemm_narrow(const Kernel& k, const GpuSpec& gpu, double narrow) {
  if (k.dtype != DType::FP4 || narrow == 0.0) return narrow;
  const double fp8 = gpu.supports(DType::FP8) ? std::log2(gpu.peak(DType::FP8) / gpu.peak(DType::BF16)) : 1.0;
  return std::min(narrow, std::max(0.0, fp8));
}

// How an attention kernel's work splits over the GPU: CTAs of (sequence, head, block of 128
// queries) and their waves over the SMs, and the mean queries and keys per sequence. Kernels
// without sequences or heads (built by a plug-in) count as one sequence of one head per 128 dims.
struct AttentionWork {
  double waves, queries_per_seq, keys_per_seq;
};
AttentionWork attention_work(const Kernel& k, const GpuSpec& gpu) {
  const double seqs = static_cast<double>(std::max<std::int64_t>(k.batch, 1));
  const double heads = k.heads > 0 ? static_cast<double>(k.heads) : 1.0;
  const double q = k.op == OpKind::AttentionDecode ? 1.0 : static_cast<double>(k.m) / seqs;
  const double ctas = seqs * heads * std::ceil(std::max(q, 1.0) / 128.0);
  return {ctas / static_cast<double>(gpu.num_sms), q, static_cast<double>(k.n) / seqs};
}

// The residual's features (see KernelFeatures::xr). For GEMMs they describe what the library's
// kernel choice depends on, in terms that are not one model's dimensions: the waves of output
// tiles over the SMs for several tile shapes, how well M, N and K fit the candidate tiles, the
// split-K a library resorts to when the output tiles cannot fill the SMs, and whether the
// operands fit in L2.
// `narrow`: the kernel's narrow_dtype (GEMMs; computed once by the caller).
void residual_features(const Kernel& k, const GpuSpec& gpu, double narrow, KernelFeatures& f) {
  const double m = static_cast<double>(k.m), n = static_cast<double>(k.n), kk = static_cast<double>(k.k);
  const double batch = static_cast<double>(k.batch), sms = static_cast<double>(gpu.num_sms);
  const double ridge = k.flops > 0 ? gpu.peak(k.dtype) / gpu.hbm_bandwidth : 1.0;
  const double intensity = k.flops > 0 && k.bytes > 0 ? k.flops / k.bytes / ridge : 1e-6;
  const double t_roof = std::max({f.t_compute, f.t_memory, 1e-9});
  auto& x = f.xr;
  x.fill(0.0);
  x[0] = f.cls == KernelClass::Gemm ? lg(m * batch) : lg(m);  // attention's batch is its sequences
  x[1] = lg(n);
  x[2] = lg(kk);
  x[3] = std::log2(intensity);
  x[4] = std::log2(std::max(k.bytes, 1.0) / gpu.l2_bytes);
  x[5] = std::log2(t_roof * 1e6);
  std::size_t i = 6;
  if (f.cls != KernelClass::Gemm) {
    // Elementwise and attention: waves of CTAs that each move 64, 128 or 256 x 512 bytes.
    for (double chunk : {64.0, 128.0, 256.0}) {
      const double waves = k.bytes / (sms * 512.0 * chunk);
      const double full = std::max(std::ceil(waves), 1.0);
      x[i++] = std::log2(full);
      x[i++] = waves / full;
    }
    if (f.cls == KernelClass::AttentionDecode) {
      // Which decode kernel an engine runs, and how it splits the work, follows the heads: a
      // grouped-query group (query heads per KV head) is packed into one CTA by some kernels
      // (TensorRT-LLM's XQA, FlashInfer, FlashAttention's GQA packing) and not by others
      // (masked multi-head fallbacks), for some group sizes and head dims only. The CTAs per
      // SM both ways let the trees tell the two apart. Chosen by the calibrations' inner
      // cross-validation (docs/kernel-model.md, "Decode attention's heads").
      const double qh = k.heads > 0 ? static_cast<double>(k.heads) : 1.0;
      const double kvh = k.kv_heads > 0 ? static_cast<double>(k.kv_heads) : qh;
      x[i++] = std::log2(qh / kvh);
      x[i++] = std::log2(batch * kvh / sms);
      x[i++] = std::log2(batch * qh / sms);
      // The KV cache's element size (log2 bytes: bf16 1, fp8 0): kernels for an fp8 cache are
      // other kernels (dequantising in the loop), not the bf16 ones at half the bytes. Chosen by
      // the calibrations' inner cross-validation (docs/kernel-model.md, "The KV element size").
      const double kv_element_bytes = decode_kv_element_bytes(k);
      x[i++] = std::log2(kv_element_bytes);
      // The keys of one sequence and the KV bytes one (sequence, KV head) streams: what decides
      // whether a kernel splits a sequence's keys over CTAs (flash-decoding) and how much work a
      // CTA has, whatever the batch. The log sizes above hold them only as differences. Chosen on
      // folds 1-2 of the target protocol (docs/kernel-model.md, "Decode's keys per sequence").
      const double keys = std::max(static_cast<double>(k.n) / std::max(batch, 1.0), 1.0);
      x[i++] = std::log2(keys);
      x[i++] = std::log2(keys * std::max(static_cast<double>(k.k), 1.0) * 2.0 * kv_element_bytes);
    }
    return;
  }
  static constexpr double kTiles[][2] = {{64, 64},  {128, 64},  {64, 128},  {128, 128},
                                         {256, 64}, {64, 256},  {128, 256}, {256, 128}};
  // Useful share of the SM-slots the best tiling occupies (all tiles; tiles of 128x128 and up).
  double best_any = 0, best_big = 0;
  for (const auto& t : kTiles) {
    const double waves = std::ceil(m / t[0]) * std::ceil(n / t[1]) * batch / sms;
    const double full = std::max(std::ceil(waves), 1.0);
    x[i++] = std::log2(full);
    x[i++] = waves / full;
    const double use = m * n * batch / (full * sms * t[0] * t[1]);
    best_any = std::max(best_any, use);
    if (t[0] * t[1] >= 128.0 * 128.0) best_big = std::max(best_big, use);
  }
  x[i++] = best_any;
  x[i++] = best_big;
  for (double t : {64.0, 128.0, 256.0}) {
    x[i++] = tile_fit(std::max(m, 1.0), t);
    x[i++] = tile_fit(std::max(n, 1.0), t);
    x[i++] = tile_fit(std::max(kk, 1.0), t);
  }
  const double tiles = std::ceil(m / 128.0) * std::ceil(n / 128.0) * batch;
  const double split = std::max(sms / tiles, 1.0);
  x[i++] = std::log2(split);
  x[i++] = lg(kk / split);
  const double elem = dtype_bytes(k.dtype);
  x[i++] = std::log2(std::max(n * kk * elem, 1.0) / gpu.l2_bytes);
  x[i++] = std::log2(std::max(m * kk * batch * elem, 1.0) / gpu.l2_bytes);
  // The dtype's tensor rate over 16-bit (log2: 0 bf16, 1 fp8, 2 fp4 on Blackwell): each dtype runs
  // its own kernels (tiles, scale handling), whose staircase the trees can then tell apart.
  x[i++] = narrow;
}

const char* kClassNames[] = {"gemm", "attention_prefill", "attention_decode", "norm",
                             "activation", "add", "rope", "embedding"};

}  // namespace

std::string_view class_name(KernelClass c) { return kClassNames[static_cast<std::size_t>(c)]; }

bool kernel_class(OpKind op, KernelClass* out) {
  switch (op) {
    case OpKind::Gemm:
    case OpKind::MoeGemm: *out = KernelClass::Gemm; return true;
    case OpKind::AttentionPrefill: *out = KernelClass::AttentionPrefill; return true;
    case OpKind::AttentionDecode: *out = KernelClass::AttentionDecode; return true;
    case OpKind::RmsNorm:
    case OpKind::LayerNorm: *out = KernelClass::Norm; return true;
    // Elementwise passes over activations; top-k and sampling are reductions of the same kind.
    case OpKind::SiluMul:
    case OpKind::Gelu:
    case OpKind::MoeTopK:
    case OpKind::Sampling: *out = KernelClass::Activation; return true;
    case OpKind::Add:
    case OpKind::MoeSum: *out = KernelClass::Add; return true;
    case OpKind::Rope: *out = KernelClass::Rope; return true;
    case OpKind::Embedding: *out = KernelClass::Embedding; return true;
    default: return false;
  }
}

namespace {
// The first features of x, assigned one by one: an initializer_list would be built on the stack
// and read back, and each kernel priced afresh (every decode attention) pays for the round trip.
template <typename... V>
void set_features(std::array<double, kMaxFeatures>& x, std::size_t& n, V... v) {
  n = 0;
  ((x[n++] = static_cast<double>(v)), ...);
}
}  // namespace

KernelFeatures kernel_features(const Kernel& k, const GpuSpec& gpu, double other_source, bool residual,
                               double without_engine_quantisation, const GpuSpec* architecture, int replayed_copies) {
  KernelFeatures f;
  f.kernel = k;
  // The narrow-dtype terms (efficiency feature and floor) are an engine's quantise-and-scale work
  // around an fp8 product: a source that times the product alone (XLA's tables) has none.
  const double engine_narrow = 1.0 - (without_engine_quantisation < 0 ? other_source : without_engine_quantisation);
  if (!kernel_class(k.op, &f.cls))
    throw std::invalid_argument("kernel '" + std::string(k.name) + "' has no efficiency class");
  f.t_compute = k.flops > 0 ? k.flops / gpu.peak(k.dtype) : 0.0;
  f.t_memory = k.bytes / gpu.hbm_bandwidth;
  f.t_issue = k.bytes / (static_cast<double>(gpu.num_sms) * gpu.clock_hz);
  f.floor_clock_scale = kFloorReferenceClockHz / gpu.clock_hz;
  const double m = static_cast<double>(k.m), n = static_cast<double>(k.n), kk = static_cast<double>(k.k);
  // log2 of the dtype's tensor rate over 16-bit, read by the GEMM residual and narrow-dtype term.
  const double narrow = f.cls == KernelClass::Gemm ? narrow_dtype(k, gpu) : 0.0;
  if (residual) residual_features(k, gpu, narrow, f);
  const double sms = static_cast<double>(gpu.num_sms);
  switch (f.cls) {
    case KernelClass::Gemm: {
      const double lm = l2(m * static_cast<double>(k.batch));
      // Compute efficiency grows with M while the output tiles fill the SMs and then levels off
      // (a sweep up to M = 4096 must not extrapolate a rising efficiency to M = 32768): a
      // saturating function of the waves of 128x128 tiles, not log M.
      const double waves = std::ceil(m / 128.0) * std::ceil(n / 128.0) * static_cast<double>(k.batch) /
                           static_cast<double>(gpu.num_sms);
      f.narrow = gemm_narrow(k, gpu, narrow) * engine_narrow;
      set_features(f.xc, f.nc, 1.0, 1.0 / (1.0 + waves), l2(n), l2(kk), other_source, f.narrow);
      f.grid_waves = waves;
      // The K loop in steps of 64. Small-M 16-bit times step up by about one launch between
      // K = 768 and K = 2048 and then barely grow (H100: 2.7 us at K = 64, 5.7 us at K = 8192): a
      // library's split-K and its reduction kernel, which the split form prices
      // (docs/kernel-model.md, "Split-K GEMMs").
      f.t_chain = std::ceil(kk / 64.0) / gpu.clock_hz;
      if (k.op == OpKind::Gemm && dtype_bytes(k.dtype) >= 2) {
        const double tiles = std::ceil(m / 128.0) * std::ceil(n / 128.0) * static_cast<double>(k.batch);
        f.split_k = std::max(1.0, std::min(std::floor(sms / tiles), std::floor(kk / 512.0)));
      }
      // The last: the copy engine, as decode's (Hopper's and Blackwell's weight-streaming GEMMs
      // keep more bytes in flight); read from the calibrated GPU on a what-if.
      const GpuSpec& arch = architecture != nullptr ? *architecture : gpu;
      set_features(f.xm, f.nm, 1.0, lm, l2(n * kk) / 2.0, other_source, bulk_async_copy(arch) ? 1.0 : 0.0);
      // An engine's narrow GEMM quantises its own input first. A MoE's grouped GEMMs quantise per
      // token before the routed rows are formed (not per routed row), and their layer's own
      // correction (moe_correction.hpp) prices what the layer adds.
      if (f.narrow > 0 && !k.quantised_input && k.op == OpKind::Gemm)
        f.t_quant = m * kk * static_cast<double>(k.batch) / gpu.hbm_bandwidth;
      // A benchmark that rotates copies of the weights between replays reads them from the L2 when
      // all copies and the activations fit in it.
      if (replayed_copies > 0) {
        const double weights = std::min(n * kk * static_cast<double>(k.batch) * dtype_bytes(k.dtype), k.bytes);
        if (replayed_copies * weights + (k.bytes - weights) <= kWarmL2Share * gpu.l2_bytes)
          f.t_l2 = k.bytes / (sms * gpu.clock_hz);
      }
      break;
    }
    case KernelClass::AttentionPrefill: {
      // FlashAttention: one CTA per (sequence, head, block of 128 queries) loops over the keys.
      // The tensor cores fill once the CTAs cover the SMs (a saturating function of the waves),
      // and a longer key loop amortises each CTA's prologue and epilogue.
      const AttentionWork w = attention_work(k, gpu);
      f.narrow = narrow_dtype(k, gpu) * engine_narrow;
      // The tensor-core width, 16-bit FLOPs per SM-cycle over 1024 (log2: L40S 0, A100 1, H100 2,
      // B200 2.9). A proxy, not a mechanism: the GPUs with wider tensor cores are also those whose
      // attention kernels run them asynchronously (Hopper's wgmma, Blackwell's tcgen05) and reach
      // a larger fraction of the peak (FA3 / TensorRT-LLM's FMHA ~0.7 at long prompts on H100 and
      // B200 after the softmax term, FA2 ~0.5 on A100). Chosen by leaving each generation out.
      const GpuSpec& arch = architecture != nullptr ? *architecture : gpu;
      const double p16 = arch.supports(DType::BF16) ? arch.peak(DType::BF16) : arch.peak(k.dtype);
      const double width =
          std::log2(std::max(p16 / (static_cast<double>(arch.num_sms) * arch.clock_hz * 1024.0), 1e-3));
      set_features(f.xc, f.nc,
          1.0, 1.0 / (1.0 + w.waves), l2(w.queries_per_seq), l2(w.keys_per_seq), other_source, f.narrow, width);
      set_features(f.xm, f.nm, 1.0, other_source);
      f.grid_waves = w.waves;
      f.t_chain = std::ceil(w.keys_per_seq / 64.0) / gpu.clock_hz;
      // Query-key pairs over every query head: the FLOPs over 4 x head_dim (QK^T and PV).
      if (k.k > 0) f.t_softmax = k.flops / (4.0 * kk) / (sms * gpu.clock_hz);
      break;
    }
    case KernelClass::AttentionDecode: {
      // Paged decode streams each sequence's keys and values: long contexts stream at the
      // bandwidth once enough (sequence, head) CTAs keep HBM busy.
      const AttentionWork w = attention_work(k, gpu);
      set_features(f.xc, f.nc, 1.0);
      // Fitted, the memory efficiency sees only the waves: fewer (sequence, head) CTAs than SMs
      // cannot keep HBM busy (Little's law). The log sizes of the keys per sequence and of the
      // sequences (xm[2], xm[3]) let the sigmoid run off beyond the training range (an L40S decode
      // of 1024 sequences of 2 keys came out 34x too slow with Ada left out): the fit holds their
      // weights at 0 (efficiency_fit.cpp). They stay features so that calibration files fitted
      // before, which weigh them, price as they did.
      // The last: whether the architecture streams with a bulk asynchronous copy engine (Hopper's
      // and Blackwell's large decodes run at 0.84-0.93 of their HBM roofline, A100's and L40S's at
      // 0.51-0.87: docs/kernel-model.md, "Decode's efficiency across generations"). Read from the
      // calibrated GPU on a what-if: a spec change does not change the kernels' design.
      const GpuSpec& arch = architecture != nullptr ? *architecture : gpu;
      set_features(f.xm, f.nm, 1.0, 1.0 / (1.0 + w.waves), l2(w.keys_per_seq), l2(m), other_source,
                   bulk_async_copy(arch) ? 1.0 : 0.0);
      if (replayed_copies > 0 && k.bytes <= kWarmL2Share * gpu.l2_bytes) f.t_l2 = k.bytes / (sms * gpu.clock_hz);
      f.grid_waves = w.waves;
      f.t_chain = std::ceil(w.keys_per_seq / 64.0) / gpu.clock_hz;
      const double qh = k.heads > 0 ? static_cast<double>(k.heads) : 1.0;
      f.kv_group = k.kv_heads > 0 ? std::max(qh / static_cast<double>(k.kv_heads), 1.0) : 1.0;
      if (f.kv_group > kMaxPackedDecodeGroup) f.t_reread = k.bytes * f.kv_group / (sms * gpu.clock_hz);
      break;
    }
    default: {
      const double lb = l2(k.bytes) / 3.0;
      set_features(f.xc, f.nc, 1.0);
      set_features(f.xm, f.nm, 1.0, lb, lb * lb, other_source);
      f.grid_waves = k.bytes / (sms * 65536.0);
      break;
    }
  }
  return f;
}

double EfficiencyModel::predict_seconds(const KernelFeatures& f, const ClassParams& p) {
  return corrected_seconds(parametric_seconds(f, p), f, p);
}

double EfficiencyModel::corrected_seconds(double t, const KernelFeatures& f, const ClassParams& p) {
  const double measured = p.measured.log_deviation(f.kernel, p.residual_fade.octaves);
  if (p.residual.empty()) return measured == 0.0 ? t : t * std::exp(measured);
  return t * std::exp(p.residual_fade.factor(f.xr[0]) * p.residual.predict(f.xr.data()) + measured);
}

ParametricTerms EfficiencyModel::parametric_terms(const KernelFeatures& f, const ClassParams& p) {
  double zc = 0, zm = 0;
  for (std::size_t i = 0; i < f.nc && i < p.wc.size(); ++i) zc += p.wc[i] * f.xc[i];
  for (std::size_t i = 0; i < f.nm && i < p.wm.size(); ++i) zm += p.wm[i] * f.xm[i];
  double waves = f.grid_waves;
  if (p.ctas_per_kv_head && f.kv_group > 1) {
    // Decode's features count (sequence, query head) CTAs; a packing kernel runs one per KV head.
    // The features belong to the kernel and the form to the calibration file, so the waves are
    // re-counted here, where both are known.
    waves /= f.kv_group;
    if (f.nm > 1 && p.wm.size() > 1) zm += p.wm[1] * (1.0 / (1.0 + waves) - f.xm[1]);
  }
  const auto exp = [](double x) { return std::exp(x); };
  ParametricTerms t;
  t.compute = f.t_compute / p.sigmoid_c(zc, sigmoid);
  t.memory = f.t_memory / (kMaxMemoryEfficiency * p.sigmoid_m(zm, sigmoid));
  t.sm = f.t_issue / p.exp_theta(p.log_theta, exp);
  t.power = 1.0 + p.exp_p_minus_1(p.log_p_minus_1, exp);
  // A split K loop: shorter per CTA, more CTAs, and the reduction's own launch.
  const bool split = p.split_k_launch && f.split_k > 1;
  if (split) waves *= f.split_k;
  t.floor = p.exp_t0(p.log_t0, exp) * ((split ? 2.0 : 1.0) + p.exp_launch_per_wave(p.log_launch_per_wave, exp) * waves);
  if (f.narrow != 0) t.floor *= p.exp_narrow(p.floor_narrow * f.narrow, exp);
  if (p.floor_in_cycles) t.floor *= f.floor_clock_scale;
  t.latency = (split ? f.t_chain / f.split_k : f.t_chain) * p.exp_chain(p.log_chain_cycles, exp);
  if (f.t_softmax > 0 && p.log_softmax_cycles > ClassParams::kNoSoftmax) {
    t.softmax = f.t_softmax * p.exp_softmax(p.log_softmax_cycles, exp);
  }
  if (f.t_reread > 0 && p.log_reread_cycles > ClassParams::kNoReread)
    t.reread = f.t_reread * p.exp_reread(p.log_reread_cycles, exp);
  if (f.t_l2 > 0 && p.log_warm_l2_cycles > ClassParams::kNoReread)
    t.memory = std::min(t.memory, f.t_l2 * p.exp_warm_l2(p.log_warm_l2_cycles, exp));
  if (f.t_quant > 0 && p.log_quant_bytes > ClassParams::kNoQuant) t.quant = f.t_quant * p.exp_quant(p.log_quant_bytes, exp);
  return t;
}

double ParametricTerms::body() const {
  const double hi = std::max({compute, memory, sm, latency, softmax, reread});
  // pow(1, p) = 1 and pow(0, p) = 0 exactly: the largest term (and an absent one) costs no call.
  auto relative = [&](double t) {
    const double r = t / hi;
    return r == 1.0 || r == 0.0 ? r : std::pow(r, power);
  };
  if (!(hi > 0)) return quant;
  return hi * std::pow(relative(compute) + relative(memory) + relative(sm) + relative(latency) + relative(softmax) +
                           relative(reread),
                       1.0 / power) +
         quant;
}

Bound ParametricTerms::binding() const {
  // The softmax's exponentials and reductions, and a decode's per-query-head re-reads (from L2),
  // are SM-side work: bound `sm`.
  const double side = std::max({sm, softmax, reread});
  // The quantisation pass streams the input: memory-side work.
  const double mem = std::max(memory, quant);
  if (compute >= mem && compute >= side && compute >= latency) return Bound::Compute;
  if (mem >= side && mem >= latency) return Bound::Memory;
  return side >= latency ? Bound::Sm : Bound::Latency;
}

double EfficiencyModel::parametric_seconds(const KernelFeatures& f, const ClassParams& p) {
  const ParametricTerms t = parametric_terms(f, p);
  return t.floor + t.body();
}

EfficiencyModel::EfficiencyModel() {
  for (auto& p : params_) {
    p.wc.assign(kMaxFeatures, 0.0);
    p.wm.assign(kMaxFeatures, 0.0);
    p.wc[0] = 1.0;  // eta_c ~ 0.73
    p.wm[0] = 1.0;  // eta_m ~ 0.91
  }
}

double EfficiencyModel::predict_seconds(const KernelFeatures& f) const {
  return predict_seconds(f, params_[static_cast<std::size_t>(f.cls)]);
}

KernelCost EfficiencyModel::cost(const Kernel& kernel, const GpuSpec& gpu, const GpuSpec* calibrated,
                                  double source, int replayed_copies) const {
  KernelClass cls;
  if (!kernel_class(kernel.op, &cls)) return roofline_cost(kernel, gpu, 0.0);  // collectives
  const ClassParams& p = params(cls);
  const bool residual = !p.residual.empty();
  // The source's efficiency offsets are the fit's nuisance terms (every prediction is of an
  // engine's kernels); whether the kernel carries an engine's fp8 quantise-and-scale work is the
  // source's own (`source`).
  KernelFeatures f = kernel_features(kernel, gpu, 0.0, residual && calibrated == nullptr, source, calibrated, replayed_copies);
  // The residual describes the calibrated GPU's own library choices (tiles, waves, split-K), not
  // physics: on a what-if spec it is read at the spec it was learned on, so only the parametric
  // (roofline-shaped) part moves with the change and the correction cannot fight the bound.
  if (residual && calibrated != nullptr) f.xr = kernel_features(kernel, *calibrated, 0.0, true, source).xr;
  KernelCost c{};
  const ParametricTerms terms = parametric_terms(f, p);
  const double parametric = terms.floor + terms.body();
  c.seconds = corrected_seconds(parametric, f, p);
  // The expert GEMMs of an engine's fused MoE, learned from whole layers; a factor on the GEMM
  // class's time, so it keeps the split below and every spec change moves it as the bound says.
  if (const double z = moe_gemm.log_factor(kernel); z != 0.0) c.seconds *= std::exp(z);
  // The learned correction scales the kernel's whole time, so the launch floor takes its share:
  // the launch part can then never exceed the time (a large decode attention, whose grid-size
  // launch term is big, came out with a negative body), and the correction leaves the split
  // between launch and work, and so the bound, as the parametric terms put them.
  c.launch_seconds = parametric > 0 ? terms.floor * (c.seconds / parametric) : terms.floor;
  const double roof = std::max(f.t_compute, f.t_memory);
  // Physics bounds what the learned correction may claim: a kernel computes no faster than the
  // peak, and one whose bytes exceed L2 streams them no faster than HBM. Trees extrapolated to a
  // shape family no sweep measured (grouped-query decodes of common models) can otherwise price
  // work faster than the GPU can move it. Bytes that fit in L2 may be served from it.
  const double bound = kernel.bytes > gpu.l2_bytes ? roof : f.t_compute;
  if (c.seconds - c.launch_seconds < bound) c.seconds = c.launch_seconds + bound;
  const double body = c.seconds - c.launch_seconds;
  c.efficiency = body > 0 ? roof / body : 1.0;
  c.compute_seconds = f.t_compute;
  c.memory_seconds = f.t_memory;
  c.bound = c.launch_seconds > body ? Bound::Launch : terms.binding();
  return c;
}

std::string EfficiencyModel::to_yaml() const {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap;
  out << YAML::Key << "kernel_efficiency_model" << YAML::Value << 1;
  out << YAML::Key << "description" << YAML::Value << description;
  out << YAML::Key << "trained_on" << YAML::Value << YAML::Flow << trained_on;
  if (!attention_backends.empty())
    out << YAML::Key << "attention_backends" << YAML::Value << YAML::Flow << attention_backends;
  if (!attention_backend.empty()) out << YAML::Key << "attention_backend" << YAML::Value << attention_backend;
  out << YAML::Key << "classes" << YAML::Value << YAML::BeginMap;
  for (std::size_t c = 0; c < kNumKernelClasses; ++c) {
    const ClassParams& p = params_[c];
    out << YAML::Key << kClassNames[c] << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "fitted" << YAML::Value << p.fitted;
    out << YAML::Key << "t0_us" << YAML::Value << std::exp(p.log_t0) * 1e6;
    out << YAML::Key << "softmax_p" << YAML::Value << 1.0 + std::exp(p.log_p_minus_1);
    out << YAML::Key << "bytes_per_sm_cycle" << YAML::Value << std::exp(p.log_theta);
    if (p.log_launch_per_wave > ClassParams::kNoLaunchPerWave)
      out << YAML::Key << "launch_per_wave" << YAML::Value << std::exp(p.log_launch_per_wave);
    if (p.floor_narrow != 0) out << YAML::Key << "floor_narrow" << YAML::Value << p.floor_narrow;
    if (p.log_chain_cycles > ClassParams::kNoChain)
      out << YAML::Key << "cycles_per_iteration" << YAML::Value << std::exp(p.log_chain_cycles);
    if (p.log_softmax_cycles > ClassParams::kNoSoftmax)
      out << YAML::Key << "cycles_per_softmax_pair" << YAML::Value << std::exp(p.log_softmax_cycles);
    if (p.log_reread_cycles > ClassParams::kNoReread)
      out << YAML::Key << "cycles_per_reread_byte" << YAML::Value << std::exp(p.log_reread_cycles);
    if (p.log_warm_l2_cycles > ClassParams::kNoReread)
      out << YAML::Key << "cycles_per_warm_l2_byte" << YAML::Value << std::exp(p.log_warm_l2_cycles);
    if (p.log_quant_bytes > ClassParams::kNoQuant)
      out << YAML::Key << "quant_bytes_per_input" << YAML::Value << std::exp(p.log_quant_bytes);
    if (p.ctas_per_kv_head) out << YAML::Key << "ctas_per_kv_head" << YAML::Value << true;
    if (p.floor_in_cycles) out << YAML::Key << "floor_in_cycles" << YAML::Value << true;
    if (p.split_k_launch) out << YAML::Key << "split_k_launch" << YAML::Value << true;
    out << YAML::Key << "w_compute" << YAML::Value << YAML::Flow << p.wc;
    out << YAML::Key << "w_memory" << YAML::Value << YAML::Flow << p.wm;
    if (!p.residual.empty()) {
      out << YAML::Key << "residual_trees" << YAML::Value;
      p.residual.emit(out);
    }
    if (p.residual_selection.folds > 0) {
      const BoostSelection& sel = p.residual_selection;
      out << YAML::Key << "residual_selection" << YAML::Value << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "folds" << YAML::Value << sel.folds << YAML::Key << "families" << YAML::Value
          << sel.families << YAML::Key << "cv_mape_pct" << YAML::Value << sel.cv_mape << YAML::Key << "depth"
          << YAML::Value << sel.options.depth << YAML::Key << "learning_rate" << YAML::Value
          << sel.options.learning_rate << YAML::Key << "trees" << YAML::Value << sel.options.trees;
      out << YAML::EndMap;
    }
    if (p.residual_fade.probe_rows > 0) {
      const ResidualFade& fade = p.residual_fade;
      out << YAML::Key << "residual_fade" << YAML::Value << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "max_log2_work" << YAML::Value << fade.max_log2_work;
      if (!std::isinf(fade.octaves)) out << YAML::Key << "octaves" << YAML::Value << fade.octaves;
      out << YAML::Key << "probe_rows" << YAML::Value << fade.probe_rows << YAML::Key << "probe_mape_pct"
          << YAML::Value << fade.probe_mape << YAML::Key << "flat_probe_mape_pct" << YAML::Value
          << fade.flat_probe_mape;
      out << YAML::EndMap;
    }
    if (p.measured.probe_rows > 0) {
      out << YAML::Key << "measured_families" << YAML::Value;
      p.measured.emit(out);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (moe_gemm.layers > 0) {
    const MoeGemmCorrection& c = moe_gemm;
    out << YAML::Key << "moe_gemm_correction" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "layers" << YAML::Value << c.layers << YAML::Key << "skipped" << YAML::Value << c.skipped;
    out << YAML::Key << "uncorrected_cv_mape_pct" << YAML::Value << c.uncorrected_cv_mape;
    if (c.selection.folds > 0) {
      out << YAML::Key << "selection" << YAML::Value << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "folds" << YAML::Value << c.selection.folds << YAML::Key << "families" << YAML::Value
          << c.selection.families << YAML::Key << "cv_mape_pct" << YAML::Value << c.selection.cv_mape << YAML::Key
          << "depth" << YAML::Value << c.selection.options.depth << YAML::Key << "learning_rate" << YAML::Value
          << c.selection.options.learning_rate << YAML::Key << "trees" << YAML::Value << c.selection.options.trees;
      out << YAML::EndMap;
    }
    if (!c.trees.empty()) {
      out << YAML::Key << "trees" << YAML::Value;
      c.trees.emit(out);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

namespace {
// A calibration value that is NaN or infinite would price every kernel as NaN.
void finite_or_throw(double v, const char* cls, const char* key) {
  if (!std::isfinite(v))
    throw std::runtime_error(std::string("classes.") + cls + "." + key + ": expected finite numbers");
}

// An optional non-negative rate `key` of class `cls`, stored as its log (`none` for 0 or absent).
void optional_log_rate(const YAML::Node& n, const char* cls, const char* key, double none, double& log_value) {
  const YAML::Node node = n[key];
  if (!node) return;
  const double v = node.as<double>();
  if (!(v >= 0) || !std::isfinite(v))
    throw std::runtime_error(std::string("classes.") + cls + "." + key + ": expected a finite number >= 0");
  log_value = v > 0 ? std::max(std::log(v), none) : none;
}
}  // namespace

EfficiencyModel EfficiencyModel::from_yaml(const std::string& text, const std::string& origin) {
  EfficiencyModel m;
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap() || !root["kernel_efficiency_model"])
      throw std::runtime_error("not a kernel efficiency model (no 'kernel_efficiency_model' key)");
    if (root["description"]) m.description = root["description"].as<std::string>();
    if (root["trained_on"]) m.trained_on = root["trained_on"].as<std::vector<std::string>>();
    if (root["attention_backends"]) m.attention_backends = root["attention_backends"].as<std::vector<std::string>>();
    if (root["attention_backend"]) m.attention_backend = root["attention_backend"].as<std::string>();
    const YAML::Node classes = root["classes"];
    if (!classes || !classes.IsMap()) throw std::runtime_error("missing 'classes'");
    for (std::size_t c = 0; c < kNumKernelClasses; ++c) {
      const YAML::Node n = classes[kClassNames[c]];
      if (!n) continue;
      ClassParams& p = m.params_[c];
      p.fitted = n["fitted"] && n["fitted"].as<bool>();
      const double t0 = n["t0_us"].as<double>() * 1e-6;
      const double power = n["softmax_p"].as<double>();
      if (!(t0 > 0) || !(power > 1)) throw std::runtime_error(std::string(kClassNames[c]) + ": t0_us must be > 0 and softmax_p > 1");
      p.log_t0 = std::log(t0);
      p.log_p_minus_1 = std::log(power - 1.0);
      const double theta = n["bytes_per_sm_cycle"].as<double>();
      if (!(theta > 0)) throw std::runtime_error(std::string(kClassNames[c]) + ": bytes_per_sm_cycle must be > 0");
      p.log_theta = std::log(theta);
      if (const YAML::Node narrow = n["floor_narrow"]) {
        p.floor_narrow = narrow.as<double>();
        finite_or_throw(p.floor_narrow, kClassNames[c], "floor_narrow");
      }
      // Optional rates (files from before each term have none): 0 or absent is no term.
      optional_log_rate(n, kClassNames[c], "cycles_per_iteration", ClassParams::kNoChain, p.log_chain_cycles);
      optional_log_rate(n, kClassNames[c], "cycles_per_softmax_pair", ClassParams::kNoSoftmax, p.log_softmax_cycles);
      optional_log_rate(n, kClassNames[c], "cycles_per_reread_byte", ClassParams::kNoReread, p.log_reread_cycles);
      optional_log_rate(n, kClassNames[c], "cycles_per_warm_l2_byte", ClassParams::kNoReread, p.log_warm_l2_cycles);
      optional_log_rate(n, kClassNames[c], "quant_bytes_per_input", ClassParams::kNoQuant, p.log_quant_bytes);
      optional_log_rate(n, kClassNames[c], "launch_per_wave", ClassParams::kNoLaunchPerWave, p.log_launch_per_wave);
      if (const YAML::Node kv = n["ctas_per_kv_head"]) p.ctas_per_kv_head = kv.as<bool>();
      if (const YAML::Node cy = n["floor_in_cycles"]) p.floor_in_cycles = cy.as<bool>();
      if (const YAML::Node sk = n["split_k_launch"]) p.split_k_launch = sk.as<bool>();
      p.wc = n["w_compute"].as<std::vector<double>>();
      p.wm = n["w_memory"].as<std::vector<double>>();
      for (const double w : p.wc) finite_or_throw(w, kClassNames[c], "w_compute");
      for (const double w : p.wm) finite_or_throw(w, kClassNames[c], "w_memory");
      finite_or_throw(t0 + power + theta, kClassNames[c], "t0_us, softmax_p, bytes_per_sm_cycle");
      p.wc.resize(kMaxFeatures, 0.0);
      p.wm.resize(kMaxFeatures, 0.0);
      if (n["residual_trees"]) {
        p.residual = BoostedTrees::parse(n["residual_trees"]);
        // Files fitted before the dtype feature was appended have one fewer: their trees never read it.
        if (p.residual.dims() != KernelFeatures::kResidualDims && p.residual.dims() != KernelFeatures::kResidualDims - 1)
          throw std::runtime_error(std::string(kClassNames[c]) + ": residual trees have " +
                                   std::to_string(p.residual.dims()) + " features, expected " +
                                   std::to_string(KernelFeatures::kResidualDims) + " (or " +
                                   std::to_string(KernelFeatures::kResidualDims - 1) +
                                   ", fitted before the dtype feature)");
      }
      if (const YAML::Node sel = n["residual_selection"]) {  // a record of the calibration, not used to predict
        BoostSelection& r = p.residual_selection;
        r.folds = sel["folds"].as<std::size_t>();
        r.families = sel["families"].as<std::size_t>();
        r.cv_mape = sel["cv_mape_pct"].as<double>();
        r.options.depth = sel["depth"].as<int>();
        r.options.learning_rate = sel["learning_rate"].as<double>();
        r.options.trees = sel["trees"].as<int>();
      }
      // Files from before the fade have none: their residual extrapolates flat, as it did.
      if (const YAML::Node fade = n["residual_fade"]) {
        ResidualFade& r = p.residual_fade;
        r.max_log2_work = fade["max_log2_work"].as<double>();
        if (fade["octaves"]) r.octaves = fade["octaves"].as<double>();
        r.probe_rows = fade["probe_rows"].as<std::size_t>();
        r.probe_mape = fade["probe_mape_pct"].as<double>();
        r.flat_probe_mape = fade["flat_probe_mape_pct"].as<double>();
        if (!std::isfinite(r.max_log2_work) || !(r.octaves >= 0))
          throw std::runtime_error(std::string("classes.") + kClassNames[c] +
                                   ".residual_fade: expected a finite max_log2_work and octaves >= 0");
      }
      // Files from before measured families have none: every kernel is priced by the class model.
      if (const YAML::Node measured = n["measured_families"]) {
        try {
          p.measured = MeasuredFamilies::parse(measured);
        } catch (const std::runtime_error& e) {
          throw std::runtime_error(std::string("classes.") + kClassNames[c] + "." + e.what());
        }
      }
    }
    // Files from before the MoE correction have none: expert GEMMs are priced as dense GEMMs.
    if (const YAML::Node moe = root["moe_gemm_correction"]) {
      MoeGemmCorrection& c = m.moe_gemm;
      c.layers = moe["layers"].as<std::size_t>();
      c.skipped = moe["skipped"].as<std::size_t>();
      c.uncorrected_cv_mape = moe["uncorrected_cv_mape_pct"].as<double>();
      if (const YAML::Node sel = moe["selection"]) {  // a record of the calibration
        c.selection.folds = sel["folds"].as<std::size_t>();
        c.selection.families = sel["families"].as<std::size_t>();
        c.selection.cv_mape = sel["cv_mape_pct"].as<double>();
        c.selection.options.depth = sel["depth"].as<int>();
        c.selection.options.learning_rate = sel["learning_rate"].as<double>();
        c.selection.options.trees = sel["trees"].as<int>();
      }
      if (moe["trees"]) {
        try {
          c.trees = BoostedTrees::parse(moe["trees"]);
        } catch (const std::runtime_error& e) {
          throw std::runtime_error(std::string("moe_gemm_correction.trees: ") + e.what());
        }
        if (c.trees.dims() != MoeGemmCorrection::kFeatures)
          throw std::runtime_error("moe_gemm_correction.trees: " + std::to_string(c.trees.dims()) +
                                   " features, expected " + std::to_string(MoeGemmCorrection::kFeatures));
      }
    }
  } catch (const YAML::Exception& e) {  // "yaml-cpp: error at line 3, column 17: bad conversion"
    throw SpecError(origin, "", std::string(e.what()) + " (a calibration file from `kernelsight calibrate`)");
  } catch (const std::runtime_error& e) {
    throw SpecError(origin, "", e.what());
  }
  return m;
}

EfficiencyModel EfficiencyModel::with_attention_classes_of(const EfficiencyModel& backend_model) const {
  EfficiencyModel m = *this;
  for (KernelClass c : {KernelClass::AttentionPrefill, KernelClass::AttentionDecode})
    if (backend_model.params(c).fitted) m.params(c) = backend_model.params(c);
  if (!backend_model.attention_backend.empty()) {
    m.attention_backend = backend_model.attention_backend;
    m.description += "; attention: " + backend_model.attention_backend + " (" + backend_model.description + ")";
  }
  return m;
}

EfficiencyModel EfficiencyModel::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SpecError(path, "", "cannot read calibration file");
  std::stringstream ss;
  ss << in.rdbuf();
  return from_yaml(ss.str(), path);
}

}  // namespace ks::kernels
