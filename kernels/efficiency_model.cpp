#include "kernels/efficiency_model.hpp"
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

KernelFeatures kernel_features(const Kernel& k, const GpuSpec& gpu, double other_source) {
  KernelFeatures f;
  if (!kernel_class(k.op, &f.cls))
    throw std::invalid_argument("kernel '" + std::string(k.name) + "' has no efficiency class");
  f.t_compute = k.flops > 0 ? k.flops / gpu.peak(k.dtype) : 0.0;
  f.t_memory = k.bytes / gpu.hbm_bandwidth;
  f.t_issue = k.bytes / (static_cast<double>(gpu.num_sms) * gpu.clock_hz);
  auto set = [](std::array<double, kMaxFeatures>& x, std::size_t& n, std::initializer_list<double> v) {
    n = 0;
    for (double d : v) x[n++] = d;
  };
  const double m = static_cast<double>(k.m), n = static_cast<double>(k.n), kk = static_cast<double>(k.k);
  {
    const double sms = static_cast<double>(gpu.num_sms);
    const double ridge = k.flops > 0 ? gpu.peak(k.dtype) / gpu.hbm_bandwidth : 1.0;
    const double intensity = k.flops > 0 && k.bytes > 0 ? k.flops / k.bytes / ridge : 1e-6;
    const double t_roof = std::max({f.t_compute, f.t_memory, 1e-9});
    f.xr = {std::log2(std::max(m * static_cast<double>(k.batch), 1.0)),
            std::log2(std::max(n, 1.0)),
            std::log2(std::max(kk, 1.0)),
            std::log2(intensity),
            std::log2(std::max(k.bytes, 1.0) / gpu.l2_bytes),
            std::log2(t_roof * 1e6)};
    std::size_t i = 6;
    for (double tile_m : {64.0, 128.0, 256.0}) {
      const double waves = f.cls == KernelClass::Gemm
                               ? std::ceil(m / tile_m) * std::ceil(n / 128.0) * static_cast<double>(k.batch) / sms
                               : k.bytes / (sms * 512.0 * tile_m);
      const double full = std::max(std::ceil(waves), 1.0);
      f.xr[i++] = std::log2(full);
      f.xr[i++] = waves / full;
    }
  }
  switch (f.cls) {
    case KernelClass::Gemm: {
      const double lm = l2(m * static_cast<double>(k.batch));
      set(f.xc, f.nc, {1.0, lm, l2(n), l2(kk), other_source});
      set(f.xm, f.nm, {1.0, lm, l2(n * kk) / 2.0, other_source});
      break;
    }
    case KernelClass::AttentionPrefill:
      set(f.xc, f.nc, {1.0, l2(m), l2(n / std::max(m, 1.0)), other_source});
      set(f.xm, f.nm, {1.0, other_source});
      break;
    case KernelClass::AttentionDecode:
      set(f.xc, f.nc, {1.0});
      set(f.xm, f.nm, {1.0, l2(m), l2(n / std::max(m, 1.0)), other_source});
      break;
    default: {
      const double lb = l2(k.bytes) / 3.0;
      set(f.xc, f.nc, {1.0});
      set(f.xm, f.nm, {1.0, lb, lb * lb, other_source});
      break;
    }
  }
  return f;
}

double EfficiencyModel::predict_seconds(const KernelFeatures& f, const ClassParams& p) {
  const double t = parametric_seconds(f, p);
  return p.residual.empty() ? t : t * std::exp(p.residual.predict(f.xr.data()));
}

double EfficiencyModel::parametric_seconds(const KernelFeatures& f, const ClassParams& p) {
  double zc = 0, zm = 0;
  for (std::size_t i = 0; i < f.nc && i < p.wc.size(); ++i) zc += p.wc[i] * f.xc[i];
  for (std::size_t i = 0; i < f.nm && i < p.wm.size(); ++i) zm += p.wm[i] * f.xm[i];
  const double tc = f.t_compute / sigmoid(zc);
  const double tm = f.t_memory / (kMaxMemoryEfficiency * sigmoid(zm));
  const double ts = f.t_issue / std::exp(p.log_theta);
  const double power = 1.0 + std::exp(p.log_p_minus_1);
  const double hi = std::max({tc, tm, ts});
  double body = 0;
  if (hi > 0) {
    body = hi * std::pow(std::pow(tc / hi, power) + std::pow(tm / hi, power) + std::pow(ts / hi, power),
                         1.0 / power);
  }
  return std::exp(p.log_t0) + body;
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

KernelCost EfficiencyModel::cost(const Kernel& kernel, const GpuSpec& gpu) const {
  KernelClass cls;
  if (!kernel_class(kernel.op, &cls)) return roofline_cost(kernel, gpu, 0.0);  // collectives
  const KernelFeatures f = kernel_features(kernel, gpu);
  const ClassParams& p = params(cls);
  KernelCost c{};
  c.seconds = predict_seconds(f, p);
  c.launch_seconds = std::exp(p.log_t0);
  const double body = c.seconds - c.launch_seconds;
  const double roof = std::max(f.t_compute, f.t_memory);
  c.efficiency = body > 0 ? roof / body : 1.0;
  c.compute_seconds = f.t_compute;
  c.memory_seconds = f.t_memory;
  if (c.launch_seconds > body)
    c.bound = Bound::Launch;
  else
    c.bound = f.t_compute >= f.t_memory ? Bound::Compute : Bound::Memory;
  return c;
}

std::string EfficiencyModel::to_yaml() const {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap;
  out << YAML::Key << "kernel_efficiency_model" << YAML::Value << 1;
  out << YAML::Key << "description" << YAML::Value << description;
  out << YAML::Key << "trained_on" << YAML::Value << YAML::Flow << trained_on;
  out << YAML::Key << "classes" << YAML::Value << YAML::BeginMap;
  for (std::size_t c = 0; c < kNumKernelClasses; ++c) {
    const ClassParams& p = params_[c];
    out << YAML::Key << kClassNames[c] << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "fitted" << YAML::Value << p.fitted;
    out << YAML::Key << "t0_us" << YAML::Value << std::exp(p.log_t0) * 1e6;
    out << YAML::Key << "softmax_p" << YAML::Value << 1.0 + std::exp(p.log_p_minus_1);
    out << YAML::Key << "bytes_per_sm_cycle" << YAML::Value << std::exp(p.log_theta);
    out << YAML::Key << "w_compute" << YAML::Value << YAML::Flow << p.wc;
    out << YAML::Key << "w_memory" << YAML::Value << YAML::Flow << p.wm;
    if (!p.residual.empty()) {
      out << YAML::Key << "residual_trees" << YAML::Value;
      p.residual.emit(out);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

namespace {
// A calibration value that is NaN or infinite would price every kernel as NaN.
void finite_or_throw(double v, const char* cls, const char* key) {
  if (!std::isfinite(v))
    throw std::runtime_error(std::string("classes.") + cls + "." + key + ": expected finite numbers");
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
      p.wc = n["w_compute"].as<std::vector<double>>();
      p.wm = n["w_memory"].as<std::vector<double>>();
      for (const double w : p.wc) finite_or_throw(w, kClassNames[c], "w_compute");
      for (const double w : p.wm) finite_or_throw(w, kClassNames[c], "w_memory");
      finite_or_throw(t0 + power + theta, kClassNames[c], "t0_us, softmax_p, bytes_per_sm_cycle");
      p.wc.resize(kMaxFeatures, 0.0);
      p.wm.resize(kMaxFeatures, 0.0);
      if (n["residual_trees"]) {
        p.residual = BoostedTrees::parse(n["residual_trees"]);
        if (p.residual.dims() != KernelFeatures::kResidualDims)
          throw std::runtime_error(std::string(kClassNames[c]) + ": residual trees have the wrong feature count");
      }
    }
  } catch (const YAML::Exception& e) {  // "yaml-cpp: error at line 3, column 17: bad conversion"
    throw SpecError(origin, "", std::string(e.what()) + " (a calibration file from `kernelsight calibrate`)");
  } catch (const std::runtime_error& e) {
    throw SpecError(origin, "", e.what());
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
