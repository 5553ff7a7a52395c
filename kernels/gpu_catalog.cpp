#include "kernels/gpu_catalog.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "base/config/document.hpp"  // did_you_mean
#include "kernels/gpu_override.hpp"
#include "kernels/spec_error.hpp"

namespace ks::kernels {
namespace {

// Top-level keys besides the numeric fields of gpu_fields() (peaks live under peak_dense).
// A plain array: the catalog may be parsed from other files' static initialisers (registries).
constexpr const char* kMetaKeys[] = {"name",    "description", "vendor", "generation",
                                     "scale_up", "sources",     "peak_dense", "base"};
constexpr const char* kRequiredNumbers[] = {"hbm_bandwidth", "memory", "num_sms", "l2", "clock"};
constexpr const char* kDtypeNames[] = {"fp32", "fp16", "bf16", "fp8", "int8", "int4"};

bool is_meta_key(const std::string& key) {
  for (const char* k : kMetaKeys) {
    if (key == k) return true;
  }
  return false;
}

// The top-level numeric keys (gpu_fields() without the peak_<dtype> ones).
bool is_number_key(const std::string& key) {
  if (key.rfind("peak_", 0) == 0) return false;
  for (const GpuField& f : gpu_fields()) {
    if (f.key == key) return true;
  }
  return false;
}

std::vector<std::string> top_level_keys() {
  std::vector<std::string> keys(std::begin(kMetaKeys), std::end(kMetaKeys));
  for (const GpuField& f : gpu_fields()) {
    if (f.key.rfind("peak_", 0) != 0) keys.push_back(f.key);
  }
  return keys;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// "expected a bandwidth such as '3.35TB/s'" for a field.
std::string expectation(const std::string& field) {
  for (const GpuField& f : gpu_fields()) {
    if (f.key == field) {
      if (f.dim == config::Dim::None) return "a whole number such as '132'";
      return std::string(config::dim_noun(f.dim)) + " such as '" + std::string(config::dim_example(f.dim)) + "'";
    }
  }
  return "a value";
}

// " (did you mean 'x'?)" or "".
std::string hint(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string best = config::did_you_mean(word, candidates);
  return best.empty() ? "" : "did you mean '" + best + "'? ";
}

struct Problem {
  std::string where;  // "file:line"
  std::string key;
  std::string what;
};

// Peaks a spec file may leave out, derived from the ones it gives (docs/hardware.md, "GPU spec
// files"): fp16 and bf16 run at one rate on every tensor core since Ampere (and on CDNA3/4);
// 8-bit tensor paths at twice the 16-bit rate (fp8 from Ada/Hopper on, int8 from Ampere on);
// int4 at four times on Ampere; fp4 at four times on Blackwell (B200: 9 dense PFLOPS) and CDNA4
// (MI355X: 10 dense PFLOPS); fp32 (CUDA cores) = 2 FLOP x 128 lanes x SMs x clock.
struct Derivation {
  const char* generation;
  bool fp8, int8, int4, fp4;
};
constexpr Derivation kGenerations[] = {
    {"ampere", false, true, true, false},   {"ada", true, true, false, false},   {"hopper", true, true, false, false},
    {"blackwell", true, true, false, true}, {"cdna3", true, true, false, false}, {"cdna4", true, true, false, true},
};

void derive_peaks(GpuSpec& gpu) {
  auto& peaks = gpu.peak_flops;
  auto derive = [&](DType dt, double value, const std::string& why) {
    if (peaks.count(dt) != 0 || !(value > 0)) return;
    peaks[dt] = value;
    gpu.sources["peak_" + std::string(dtype_name(dt))] = "derived: " + why;
  };
  if (peaks.count(DType::BF16) != 0) derive(DType::FP16, peaks.at(DType::BF16), "= peak_bf16 (one 16-bit tensor rate)");
  if (peaks.count(DType::FP16) != 0) derive(DType::BF16, peaks.at(DType::FP16), "= peak_fp16 (one 16-bit tensor rate)");
  derive(DType::FP32, 2.0 * 128.0 * gpu.num_sms * gpu.clock_hz, "2 FLOP x 128 FP32 lanes x num_sms x clock");
  if (peaks.count(DType::BF16) == 0) return;
  const double bf16 = peaks.at(DType::BF16);
  for (const Derivation& d : kGenerations) {
    if (gpu.generation != d.generation) continue;
    if (d.fp8) derive(DType::FP8, 2.0 * bf16, "2 x peak_bf16 (" + gpu.generation + " fp8 tensor cores)");
    if (d.int8) derive(DType::INT8, 2.0 * bf16, "2 x peak_bf16 (" + gpu.generation + " int8 tensor cores)");
    if (d.int4) derive(DType::INT4, 4.0 * bf16, "4 x peak_bf16 (" + gpu.generation + " int4 tensor cores)");
    if (d.fp4) derive(DType::FP4, 4.0 * bf16, "4 x peak_bf16 (" + gpu.generation + " fp4 tensor cores)");
  }
}

class Loader {
 public:
  Loader(const YAML::Node& root, const std::string& origin, bool allow_base)
      : root_(root), origin_(origin), allow_base_(allow_base) {}

  GpuSpec load() {
    GpuSpec gpu;
    if (!root_.IsMap()) {
      error(root_, "", "expected a mapping of GPU fields");
      finish();
    }
    const GpuSpec* base = read_base();
    if (base != nullptr) {
      gpu = *base;
      gpu.description = "based on " + base->description;
    }
    gpu.name = text(root_, "name", true);
    if (const std::string d = text(root_, "description", false); !d.empty()) gpu.description = d;
    if (const std::string v = text(root_, "vendor", false); !v.empty()) gpu.vendor = v;
    if (const std::string g = text(root_, "generation", false); !g.empty()) gpu.generation = g;
    if (const std::string u = text(root_, "scale_up", false); !u.empty()) {
      if (u == "switch" || u == "bridge") gpu.scale_up = u;
      else error(root_["scale_up"], "scale_up", "expected 'switch' or 'bridge', got '" + u + "'");
    }
    read_sources(base == nullptr);

    const std::vector<std::string> known = top_level_keys();
    for (const auto& entry : root_) {
      const std::string key = entry.first.as<std::string>();
      if (is_meta_key(key)) continue;
      if (!is_number_key(key)) {
        error(entry.first, key,
              "unknown key (" + hint(key, known) + "expected one of " + join(known) + ")");
        continue;
      }
      number(gpu, key, entry.second, key);
    }
    read_peaks(gpu, base != nullptr);
    if (base == nullptr) {
      for (const char* required : kRequiredNumbers) {
        if (!root_[required]) error(root_, required, "missing (expected " + expectation(required) + ")");
      }
    }
    if (problems_.empty() && allow_base_) derive_peaks(gpu);  // the shipped catalogue cites every number
    for (const auto& [key, citation] : sources_) {
      if (used_.count(key) == 0) error(root_["sources"], "sources." + key, "not cited by any number");
      gpu.source += (gpu.source.empty() ? "" : "; ") + citation;
    }
    finish();
    return gpu;
  }

 private:
  void error(const YAML::Node& at, const std::string& key, const std::string& what) { error(at.Mark(), key, what); }
  void error(const YAML::Mark& mark, const std::string& key, const std::string& what) {
    const std::string where = mark.line >= 0 ? origin_ + ":" + std::to_string(mark.line + 1) : origin_;
    problems_.push_back({where, key, what});
  }

  // One problem: thrown as before ("file:line: key 'k': what"); several: one error listing all.
  void finish() const {
    if (problems_.empty()) return;
    if (problems_.size() == 1) throw SpecError(problems_[0].where, problems_[0].key, problems_[0].what);
    std::string all = std::to_string(problems_.size()) + " problems in the GPU spec:";
    for (const Problem& p : problems_)
      all += "\n  " + p.where + ": " + (p.key.empty() ? "" : "key '" + p.key + "': ") + p.what;
    throw SpecError(origin_, "", all);
  }

  // `base: <catalog GPU>`: the spec every field not given in the file comes from.
  const GpuSpec* read_base() {
    const YAML::Node n = root_["base"];
    if (!n) return nullptr;
    if (!allow_base_) {
      error(n, "base", "not allowed in the shipped catalogue (data/gpus): give every number");
      return nullptr;
    }
    if (!n.IsScalar() || n.Scalar().empty()) {
      error(n, "base", "expected the name of a catalogue GPU (" + join(builtin_gpu_names()) + ")");
      return nullptr;
    }
    const GpuSpec* base = find_builtin_gpu(n.Scalar());
    if (base == nullptr) {
      error(n, "base", "unknown GPU '" + n.Scalar() + "' (" + hint(n.Scalar(), builtin_gpu_names()) +
                           "known: " + join(builtin_gpu_names()) + ")");
    }
    return base;
  }

  // `prefix` is the key path of `map` for messages ("memory." -> "memory.source").
  std::string text(const YAML::Node& map, const char* key, bool required, const std::string& prefix = "") {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) error(map, prefix + key, "missing");
      return "";
    }
    if (!n.IsScalar() || n.Scalar().empty()) {
      error(n, prefix + key, "expected a non-empty string");
      return "";
    }
    return n.Scalar();
  }

  // Without a base every number needs a citation, so the table is required.
  void read_sources(bool required) {
    const YAML::Node s = root_["sources"];
    if (!s && !required) return;
    if (!s || !s.IsMap() || s.size() == 0) {
      error(s ? s : root_, "sources", "expected a mapping of source name -> citation");
      return;
    }
    for (const auto& entry : s) {
      const std::string key = entry.first.as<std::string>();
      if (!entry.second.IsScalar() || entry.second.Scalar().empty()) {
        error(entry.second, "sources." + key, "expected a citation string");
        continue;
      }
      sources_[key] = entry.second.Scalar();
    }
  }

  void read_peaks(GpuSpec& gpu, bool inherited) {
    const YAML::Node peaks = root_["peak_dense"];
    if (!peaks && inherited) return;
    if (!peaks || !peaks.IsMap() || (peaks.size() == 0 && !inherited)) {
      error(peaks ? peaks : root_, "peak_dense",
            "expected a mapping of dtype -> dense peak, with at least bf16 or fp16 (e.g. bf16: {value: 989TFLOPS, "
            "source: ...})");
      return;
    }
    const std::vector<std::string> dtypes(std::begin(kDtypeNames), std::end(kDtypeNames));
    bool sixteen_bit = false;
    for (const auto& entry : peaks) {
      const std::string dt = entry.first.as<std::string>();
      const auto parsed = parse_dtype(dt);
      if (!parsed || dtype_name(*parsed) != dt) {
        error(entry.first, "peak_dense." + dt,
              "unknown dtype (" + hint(dt, dtypes) + "expected one of fp32, fp16, bf16, fp8, int8, int4)");
        continue;
      }
      sixteen_bit |= *parsed == DType::BF16 || *parsed == DType::FP16;
      number(gpu, "peak_" + dt, entry.second, "peak_dense." + dt);
    }
    if (!sixteen_bit && !inherited)
      error(peaks, "peak_dense", "missing bf16 or fp16 (the other peaks are derived from it; docs/hardware.md)");
  }

  // `{value: ..., source: ..., note: ...}` (or a bare value when `sources` has exactly one entry)
  // -> the field, with its citation recorded.
  void number(GpuSpec& gpu, const std::string& field, const YAML::Node& node, const std::string& key) {
    std::string value, source;
    YAML::Mark value_mark = node.Mark(), source_mark = node.Mark();
    std::string value_key = key;
    if (node.IsScalar()) {
      if (sources_.size() != 1) {
        error(node, key,
              "expected {value: ..., source: ...} (a bare value such as '" + node.Scalar() +
                  "' needs exactly one entry in `sources` to cite)");
        return;
      }
      value = node.Scalar();
      source = sources_.begin()->first;
    } else if (!node.IsMap()) {
      error(node, key, "expected {value: ..., source: ...}");
      return;
    } else {
      bool ok = true;
      for (const auto& entry : node) {
        const std::string k = entry.first.as<std::string>();
        if (k != "value" && k != "source" && k != "note") {
          error(entry.first, key + "." + k,
                "unknown key (" + hint(k, {"value", "source", "note"}) + "expected value, source, note)");
          ok = false;
        }
      }
      const YAML::Node v = node["value"];
      const YAML::Node s = node["source"];
      if (!v) {
        error(node, key + ".value", "missing (expected " + expectation(field) + ")");
        ok = false;
      } else if (!v.IsScalar() || v.Scalar().empty()) {
        error(v, key + ".value", "expected " + expectation(field));
        ok = false;
      }
      if (!s) {
        error(node, key + ".source", "missing (expected one of the keys of `sources`)");
        ok = false;
      } else if (!s.IsScalar() || s.Scalar().empty()) {
        error(s, key + ".source", "expected the name of a source");
        ok = false;
      }
      if (!ok) return;
      value = v.Scalar();
      source = s.Scalar();
      value_mark = v.Mark();
      source_mark = s.Mark();
      value_key = key + ".value";
    }
    const auto cited = sources_.find(source);
    if (cited == sources_.end()) {
      std::vector<std::string> names;
      for (const auto& entry : sources_) names.push_back(entry.first);
      error(source_mark, key + ".source",
            "'" + source + "' is not a key of sources" +
                (names.empty() ? "" : " (" + hint(source, names) + "sources: " + join(names) + ")"));
      return;
    }
    used_.insert(source);
    try {
      set_gpu_field(gpu, field, value);
    } catch (const std::invalid_argument& e) {
      error(value_mark, value_key, e.what());
      return;
    }
    gpu.sources[field] = cited->second;
  }

  const YAML::Node& root_;
  const std::string& origin_;
  bool allow_base_;
  std::map<std::string, std::string> sources_;
  std::set<std::string> used_;
  std::vector<Problem> problems_;
};

GpuSpec parse(std::string_view yaml_text, const std::string& origin, bool allow_base) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw SpecError(origin + ":" + std::to_string(e.mark.line + 1), "", "not valid YAML: " + e.msg);
  }
  try {
    return Loader(root, origin, allow_base).load();
  } catch (const YAML::Exception& e) {  // e.g. a mapping used as a key: not a spec file at all
    throw SpecError(origin + ":" + std::to_string(e.mark.line + 1), "", "not a GPU spec: " + e.msg);
  }
}

}  // namespace

GpuSpec parse_gpu_spec(std::string_view yaml_text, const std::string& origin) {
  return parse(yaml_text, origin, true);
}

GpuSpec parse_catalog_gpu_spec(std::string_view yaml_text, const std::string& origin) {
  return parse(yaml_text, origin, false);
}

GpuSpec load_gpu_spec(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SpecError(path, "", "cannot read file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_gpu_spec(text.str(), path);
}

}  // namespace ks::kernels
