#include "kernels/measured_families.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "kernels/boost_selection.hpp"
#include "kernels/number_list.hpp"

namespace ks::kernels {
namespace {

// Measured deviations are written with 6 significant digits: finer than their noise.
std::vector<double> rounded(const std::vector<double>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  char buf[32];
  for (const double v : values) {
    std::snprintf(buf, sizeof buf, "%.6g", v);
    out.push_back(std::strtod(buf, nullptr));
  }
  return out;
}

constexpr OpKind kFamilyOps[] = {OpKind::Embedding, OpKind::RmsNorm, OpKind::LayerNorm, OpKind::Gemm,
                                 OpKind::MoeTopK,   OpKind::MoeGemm, OpKind::MoeSum,    OpKind::Rope,
                                 OpKind::SiluMul,   OpKind::Gelu,    OpKind::Add,       OpKind::Sampling};

double log2_work(const Kernel& kernel) { return std::log2(std::max(static_cast<double>(kernel.m), 1.0)); }

bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({std::fabs(a), std::fabs(b), 1.0}); }

// The log deviation at x from the points (xs, ys), held beyond the first and last.
double interpolate(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
  if (x <= xs.front()) return ys.front();
  if (x >= xs.back()) return ys.back();
  const auto hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin());
  const double w = (x - xs[hi - 1]) / (xs[hi] - xs[hi - 1]);
  return (1.0 - w) * ys[hi - 1] + w * ys[hi];
}

// Fills bytes/FLOPs per m from the rows of one family; false if they are not affine in m.
bool fit_affine(const std::vector<const FamilyMeasurement*>& rows, MeasuredFamily& family) {
  const Kernel* lo = &rows.front()->kernel;
  const Kernel* hi = lo;
  for (const auto* r : rows) {
    if (r->kernel.m < lo->m) lo = &r->kernel;
    if (r->kernel.m > hi->m) hi = &r->kernel;
  }
  const double dm = static_cast<double>(hi->m - lo->m);
  family.bytes_per_m = dm > 0 ? (hi->bytes - lo->bytes) / dm : 0.0;
  family.bytes_fixed = lo->bytes - family.bytes_per_m * static_cast<double>(lo->m);
  family.flops_per_m = lo->m > 0 ? lo->flops / static_cast<double>(lo->m) : 0.0;
  return std::all_of(rows.begin(), rows.end(), [&](const FamilyMeasurement* r) { return family.contains(r->kernel); });
}

std::string key_name(const ShapeFamilyKey& key) {
  return std::string(op_name(key.op)) + " " + std::string(dtype_name(key.dtype)) + " n=" + std::to_string(key.n) +
         " k=" + std::to_string(key.k);
}

}  // namespace

std::size_t ShapeFamilyKeyHash::operator()(const ShapeFamilyKey& key) const {
  std::uint64_t h = 1469598103934665603ull;
  for (const std::uint64_t v :
       {static_cast<std::uint64_t>(key.op), static_cast<std::uint64_t>(key.dtype), static_cast<std::uint64_t>(key.n),
        static_cast<std::uint64_t>(key.k), static_cast<std::uint64_t>(key.batch), static_cast<std::uint64_t>(key.groups)})
    h = (h ^ v) * 1099511628211ull;
  return static_cast<std::size_t>(h);
}

bool has_shape_family(OpKind op) { return std::find(std::begin(kFamilyOps), std::end(kFamilyOps), op) != std::end(kFamilyOps); }

ShapeFamilyKey shape_family_key(const Kernel& kernel) {
  return {kernel.op, kernel.dtype, kernel.n, kernel.k, kernel.batch, kernel.groups};
}

bool MeasuredFamily::contains(const Kernel& kernel) const {
  const double m = static_cast<double>(kernel.m);
  return shape_family_key(kernel) == key && close(kernel.bytes, bytes_per_m * m + bytes_fixed) &&
         close(kernel.flops, flops_per_m * m);
}

double MeasuredFamily::log_deviation(double x, double fade_octaves) const {
  const double value = interpolate(log2_m, log_ratio, x);
  const double beyond = std::max(log2_m.front() - x, x - log2_m.back());
  if (!(beyond > 0) || std::isinf(fade_octaves)) return value;
  return fade_octaves > 0 ? value * std::max(0.0, 1.0 - beyond / fade_octaves) : 0.0;
}

MeasuredFamilies MeasuredFamilies::build(const std::vector<FamilyMeasurement>& rows) {
  std::unordered_map<ShapeFamilyKey, std::vector<const FamilyMeasurement*>, ShapeFamilyKeyHash> groups;
  std::vector<ShapeFamilyKey> order;  // first appearance: the build is deterministic
  for (const FamilyMeasurement& r : rows) {
    if (!has_shape_family(r.kernel.op) || !std::isfinite(r.log_ratio)) continue;
    auto [it, added] = groups.try_emplace(shape_family_key(r.kernel));
    if (added) order.push_back(it->first);
    it->second.push_back(&r);
  }
  MeasuredFamilies out;
  for (const ShapeFamilyKey& key : order) {
    const auto& members = groups[key];
    MeasuredFamily family;
    family.key = key;
    if (!fit_affine(members, family)) continue;
    std::map<double, std::pair<double, std::size_t>> at;  // log2 m -> (sum of log ratios, count)
    for (const auto* r : members) {
      auto& [sum, count] = at[log2_work(r->kernel)];
      sum += r->log_ratio;
      ++count;
    }
    for (const auto& [x, s] : at) {
      family.log2_m.push_back(x);
      family.log_ratio.push_back(s.first / static_cast<double>(s.second));
    }
    out.families_.push_back(std::move(family));
  }
  std::sort(out.families_.begin(), out.families_.end(), [](const MeasuredFamily& a, const MeasuredFamily& b) {
    const auto& x = a.key;
    const auto& y = b.key;
    return std::tie(x.op, x.dtype, x.n, x.k, x.batch, x.groups) < std::tie(y.op, y.dtype, y.n, y.k, y.batch, y.groups);
  });
  out.index();
  return out;
}

void MeasuredFamilies::index() {
  by_key_.clear();
  for (std::size_t i = 0; i < families_.size(); ++i) {
    if (!by_key_.emplace(families_[i].key, i).second)
      throw std::runtime_error("measured_families: family " + key_name(families_[i].key) + " appears twice");
  }
}

double MeasuredFamilies::log_deviation(const Kernel& kernel, double fade_octaves) const {
  if (families_.empty()) return 0.0;
  const auto it = by_key_.find(shape_family_key(kernel));
  if (it == by_key_.end()) return 0.0;
  const MeasuredFamily& family = families_[it->second];
  return family.contains(kernel) ? family.log_deviation(log2_work(kernel), fade_octaves) : 0.0;
}

MeasuredFamilies select_measured_families(const std::vector<FamilyMeasurement>& rows) {
  MeasuredFamilies all = MeasuredFamilies::build(rows);
  // Every other distinct m of each family left out, predicted from the others.
  std::vector<MeasuredFamily> kept(all.families().size());
  for (std::size_t f = 0; f < kept.size(); ++f) {
    const MeasuredFamily& family = all.families()[f];
    kept[f].key = family.key;
    for (std::size_t i = 0; i < family.log2_m.size(); i += 2) {
      kept[f].log2_m.push_back(family.log2_m[i]);
      kept[f].log_ratio.push_back(family.log_ratio[i]);
    }
  }
  std::unordered_map<ShapeFamilyKey, std::size_t, ShapeFamilyKeyHash> index;
  for (std::size_t f = 0; f < kept.size(); ++f) index.emplace(kept[f].key, f);
  std::vector<double> gain(kept.size(), 0.0);  // per family: model-alone error - with-points error
  std::vector<bool> probed(kept.size(), false);
  double with_points = 0, model_alone = 0;
  std::size_t n = 0;
  for (const FamilyMeasurement& r : rows) {
    if (!has_shape_family(r.kernel.op) || !std::isfinite(r.log_ratio)) continue;
    const auto it = index.find(shape_family_key(r.kernel));
    if (it == index.end() || !all.families()[it->second].contains(r.kernel)) continue;
    const MeasuredFamily& anchors = kept[it->second];
    const double x = log2_work(r.kernel);
    if (std::binary_search(anchors.log2_m.begin(), anchors.log2_m.end(), x)) continue;  // not left out
    const double e_points = std::fabs(std::exp(anchors.log_deviation(x, INFINITY) - r.log_ratio) - 1.0);
    const double e_model = std::fabs(std::exp(-r.log_ratio) - 1.0);
    with_points += e_points;
    model_alone += e_model;
    gain[it->second] += e_model - e_points;
    probed[it->second] = true;
    ++n;
  }
  if (n == 0) return {};
  std::size_t families = 0, better_in = 0;
  for (std::size_t f = 0; f < kept.size(); ++f) {
    families += probed[f];
    better_in += probed[f] && gain[f] > 0;
  }
  const bool better = with_points < model_alone && sign_test_p(better_in, families) < kMeasuredFamilySignificance;
  MeasuredFamilies out = better ? std::move(all) : MeasuredFamilies();
  out.probe_rows = n;
  out.probe_families = families;
  out.probe_better_in = better_in;
  out.probe_mape = 100.0 * with_points / static_cast<double>(n);
  out.model_probe_mape = 100.0 * model_alone / static_cast<double>(n);
  return out;
}

void MeasuredFamilies::emit(YAML::Emitter& out) const {
  out << YAML::BeginMap;
  out << YAML::Key << "probe" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "rows" << YAML::Value << probe_rows << YAML::Key << "families" << YAML::Value << probe_families
      << YAML::Key << "better_in" << YAML::Value << probe_better_in << YAML::Key << "mape_pct" << YAML::Value
      << probe_mape << YAML::Key << "model_mape_pct" << YAML::Value << model_probe_mape;
  out << YAML::EndMap;
  out << YAML::Key << "families" << YAML::Value << YAML::BeginSeq;
  for (const MeasuredFamily& f : families_) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "op" << YAML::Value << std::string(op_name(f.key.op));
    out << YAML::Key << "dtype" << YAML::Value << std::string(dtype_name(f.key.dtype));
    out << YAML::Key << "n" << YAML::Value << f.key.n << YAML::Key << "k" << YAML::Value << f.key.k;
    out << YAML::Key << "batch" << YAML::Value << f.key.batch << YAML::Key << "groups" << YAML::Value << f.key.groups;
    out << YAML::Key << "bytes_per_m" << YAML::Value << f.bytes_per_m << YAML::Key << "bytes_fixed" << YAML::Value
        << f.bytes_fixed << YAML::Key << "flops_per_m" << YAML::Value << f.flops_per_m;
    std::vector<std::int64_t> m;
    for (const double x : f.log2_m) m.push_back(std::llround(std::exp2(x)));
    out << YAML::Key << "m" << YAML::Value << YAML::SingleQuoted << format_number_list(m);
    out << YAML::Key << "log_ratio" << YAML::Value << YAML::SingleQuoted << format_number_list(rounded(f.log_ratio));
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
}

MeasuredFamilies MeasuredFamilies::parse(const YAML::Node& node) {
  MeasuredFamilies out;
  if (const YAML::Node probe = node["probe"]) {
    out.probe_rows = probe["rows"].as<std::size_t>();
    out.probe_families = probe["families"].as<std::size_t>();
    out.probe_better_in = probe["better_in"].as<std::size_t>();
    out.probe_mape = probe["mape_pct"].as<double>();
    out.model_probe_mape = probe["model_mape_pct"].as<double>();
  }
  const YAML::Node families = node["families"];
  if (!families || !families.IsSequence()) throw std::runtime_error("measured_families: expected a 'families' list");
  for (std::size_t i = 0; i < families.size(); ++i) {
    const YAML::Node f = families[i];
    const std::string where = "measured_families.families[" + std::to_string(i) + "]";
    MeasuredFamily family;
    const std::string op = f["op"].as<std::string>();
    const auto known = std::find_if(std::begin(kFamilyOps), std::end(kFamilyOps),
                                    [&](OpKind k) { return op_name(k) == op; });
    if (known == std::end(kFamilyOps)) throw std::runtime_error(where + ".op: '" + op + "' has no shape family");
    family.key.op = *known;
    const auto dtype = parse_dtype(f["dtype"].as<std::string>());
    if (!dtype) throw std::runtime_error(where + ".dtype: unknown dtype");
    family.key.dtype = *dtype;
    family.key.n = f["n"].as<std::int64_t>();
    family.key.k = f["k"].as<std::int64_t>();
    family.key.batch = f["batch"].as<std::int64_t>();
    family.key.groups = f["groups"].as<std::int64_t>();
    family.bytes_per_m = f["bytes_per_m"].as<double>();
    family.bytes_fixed = f["bytes_fixed"].as<double>();
    family.flops_per_m = f["flops_per_m"].as<double>();
    const auto m = parse_int_list(f["m"], where + ".m");
    if (std::any_of(m.begin(), m.end(), [](std::int64_t v) { return v < 1; }))
      throw std::runtime_error(where + ".m: expected values >= 1");
    for (const std::int64_t v : m) family.log2_m.push_back(std::log2(static_cast<double>(v)));
    family.log_ratio = parse_double_list(f["log_ratio"], where + ".log_ratio");
    bool finite = std::isfinite(family.bytes_per_m + family.bytes_fixed + family.flops_per_m);
    for (const double v : family.log_ratio) finite = finite && std::isfinite(v) && std::fabs(v) < 10.0;
    if (!finite) throw std::runtime_error(where + ": expected finite numbers (log ratios within +-10)");
    if (family.log2_m.empty() || family.log2_m.size() != family.log_ratio.size())
      throw std::runtime_error(where + ": m and log_ratio must be non-empty lists of equal length");
    if (std::adjacent_find(family.log2_m.begin(), family.log2_m.end(), std::greater_equal<double>()) !=
        family.log2_m.end())
      throw std::runtime_error(where + ".m: expected strictly ascending values");
    out.families_.push_back(std::move(family));
  }
  out.index();
  return out;
}

}  // namespace ks::kernels
