#include "kernels/kernel_uncertainty.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "base/util/data_dir.hpp"

namespace ks::kernels {
namespace {

[[noreturn]] void fail(const std::string& path, const YAML::Node& node, const std::string& key,
                       const std::string& what) {
  const int line = node.IsDefined() ? node.Mark().line + 1 : 0;
  throw std::runtime_error(path + (line > 0 ? ":" + std::to_string(line) : "") + ": " + key + ": " + what);
}

std::vector<double> ascending_numbers(const std::string& path, const YAML::Node& node, const std::string& key) {
  if (!node.IsSequence() || node.size() < 2) fail(path, node, key, "expected a list of at least 2 numbers");
  std::vector<double> values;
  for (const auto& item : node) {
    double v = 0;
    try {
      v = item.as<double>();
    } catch (const YAML::Exception&) {
      fail(path, item, key, "expected a number, got '" + item.Scalar() + "'");
    }
    if (!std::isfinite(v)) fail(path, item, key, "expected a finite number");
    if (!values.empty() && v < values.back()) fail(path, item, key, "expected non-decreasing values");
    values.push_back(v);
  }
  return values;
}

std::optional<KernelClass> class_named(const std::string& name) {
  for (std::size_t c = 0; c < kNumKernelClasses; ++c)
    if (class_name(static_cast<KernelClass>(c)) == name) return static_cast<KernelClass>(c);
  return std::nullopt;
}

std::string class_list() {
  std::string list;
  for (std::size_t c = 0; c < kNumKernelClasses; ++c)
    list += (c ? ", " : "") + std::string(class_name(static_cast<KernelClass>(c)));
  return list;
}

}  // namespace

KernelUncertainty KernelUncertainty::load(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw std::runtime_error(path + ": cannot read the kernel uncertainty file");
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  KernelUncertainty u;
  u.probabilities_ = ascending_numbers(path, root["probabilities"], "probabilities");
  for (double p : u.probabilities_)
    if (p <= 0 || p >= 1) fail(path, root["probabilities"], "probabilities", "expected values in (0, 1)");
  const YAML::Node tiers = root["tiers"];
  if (!tiers.IsMap()) fail(path, root, "tiers", "expected a mapping tier -> class -> residuals");
  for (const auto& tier_entry : tiers) {
    const std::string tier_text = tier_entry.first.as<std::string>();
    const auto tier = parse_tier(tier_text);
    if (!tier) fail(path, tier_entry.first, "tiers." + tier_text, "unknown tier (roofline, cross-gen, target)");
    if (!tier_entry.second.IsMap()) fail(path, tier_entry.second, "tiers." + tier_text, "expected a mapping");
    for (const auto& class_entry : tier_entry.second) {
      const std::string name = class_entry.first.as<std::string>();
      const std::string key = "tiers." + tier_text + "." + name;
      const auto cls = class_named(name);
      if (!cls) fail(path, class_entry.first, key, "unknown kernel class (known: " + class_list() + ")");
      ClassResiduals r;
      const YAML::Node rows = class_entry.second["rows"];
      try {
        r.rows = rows.as<std::size_t>();
      } catch (const YAML::Exception&) {
        fail(path, rows.IsDefined() ? rows : class_entry.second, key + ".rows", "expected a row count");
      }
      r.log_ratio = ascending_numbers(path, class_entry.second["log_ratio"], key + ".log_ratio");
      if (r.log_ratio.size() != u.probabilities_.size())
        fail(path, class_entry.second["log_ratio"], key + ".log_ratio",
             "expected " + std::to_string(u.probabilities_.size()) + " values, one per probability");
      u.by_tier_[static_cast<std::size_t>(*tier)][static_cast<std::size_t>(*cls)] = std::move(r);
    }
  }
  return u;
}

std::string KernelUncertainty::shipped_path() { return data_dir() + "/calibration/uncertainty.yaml"; }

const KernelUncertainty& KernelUncertainty::shipped() {
  static const KernelUncertainty u = load(shipped_path());
  return u;
}

const ClassResiduals* KernelUncertainty::residuals(Tier tier, KernelClass cls) const {
  const auto& r = by_tier_[static_cast<std::size_t>(tier)][static_cast<std::size_t>(cls)];
  return r ? &*r : nullptr;
}

double KernelUncertainty::ratio_quantile(Tier tier, KernelClass cls, double p) const {
  const ClassResiduals* r = residuals(tier, cls);
  if (r == nullptr) return 1.0;
  const auto& ps = probabilities_;
  if (p <= ps.front()) return std::exp(r->log_ratio.front());
  if (p >= ps.back()) return std::exp(r->log_ratio.back());
  const std::size_t i = static_cast<std::size_t>(std::upper_bound(ps.begin(), ps.end(), p) - ps.begin());
  const double w = (p - ps[i - 1]) / (ps[i] - ps[i - 1]);
  return std::exp(r->log_ratio[i - 1] + w * (r->log_ratio[i] - r->log_ratio[i - 1]));
}

std::array<double, kNumKernelClasses> parse_class_scales(const std::string& text) {
  std::array<double, kNumKernelClasses> scales;
  scales.fill(1.0);
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("expected class=multiplier pairs separated by commas (e.g. gemm=1.1,"
                                  "attention_decode=0.9), got '" + item + "'");
    const std::string name = item.substr(0, eq);
    const auto cls = class_named(name);
    if (!cls) throw std::invalid_argument("unknown kernel class '" + name + "' (known: " + class_list() + ")");
    const std::string number = item.substr(eq + 1);
    char* rest = nullptr;
    const double v = std::strtod(number.c_str(), &rest);
    if (number.empty() || *rest != '\0' || !std::isfinite(v) || v <= 0)
      throw std::invalid_argument("multiplier of '" + name + "' must be a positive number, got '" + number + "'");
    scales[static_cast<std::size_t>(*cls)] = v;
    begin = end + 1;
  }
  return scales;
}

std::string format_class_scales(const std::array<double, kNumKernelClasses>& scales) {
  std::string text;
  char buf[32];
  for (std::size_t c = 0; c < kNumKernelClasses; ++c) {
    if (scales[c] == 1.0) continue;
    std::snprintf(buf, sizeof buf, "%.17g", scales[c]);
    text += (text.empty() ? "" : ",") + std::string(class_name(static_cast<KernelClass>(c))) + "=" + buf;
  }
  return text;
}

}  // namespace ks::kernels
