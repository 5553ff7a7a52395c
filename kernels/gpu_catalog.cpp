#include "kernels/gpu_catalog.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "kernels/gpu_override.hpp"
#include "kernels/spec_error.hpp"

namespace ks::kernels {
namespace {

// Top-level keys besides the numeric fields of gpu_fields() (peaks live under peak_dense).
// A plain array: the catalog may be parsed from other files' static initialisers (registries).
constexpr const char* kMetaKeys[] = {"name", "description", "vendor", "generation", "sources", "peak_dense"};

bool is_meta_key(const std::string& key) {
  for (const char* k : kMetaKeys) {
    if (key == k) return true;
  }
  return false;
}

class Loader {
 public:
  Loader(const YAML::Node& root, const std::string& origin) : root_(root), origin_(origin) {}

  GpuSpec load() {
    if (!root_.IsMap()) fail(root_, "", "expected a mapping of GPU fields");
    GpuSpec gpu;
    gpu.name = text(root_, "name", true);
    gpu.description = text(root_, "description", false);
    gpu.vendor = text(root_, "vendor", false);
    gpu.generation = text(root_, "generation", false);
    read_sources();
    for (const auto& entry : root_) {
      const std::string key = entry.first.as<std::string>();
      if (is_meta_key(key)) continue;
      bool numeric = false;
      for (const GpuField& f : gpu_fields()) numeric |= f.key == key && key.rfind("peak_", 0) != 0;
      if (!numeric) {
        fail(entry.first, key,
             "unknown key (expected name, description, vendor, generation, sources, peak_dense, "
             "hbm_bandwidth, memory, l2, clock, num_sms, nvlink_bandwidth, pcie_bandwidth)");
      }
      number(gpu, key, entry.second, key);
    }
    const YAML::Node peaks = root_["peak_dense"];
    if (!peaks || !peaks.IsMap() || peaks.size() == 0) {
      fail(peaks ? peaks : root_, "peak_dense", "expected a mapping of dtype -> dense peak");
    }
    for (const auto& entry : peaks) {
      const std::string dt = entry.first.as<std::string>();
      const auto parsed = parse_dtype(dt);
      if (!parsed || dtype_name(*parsed) != dt) {
        fail(entry.first, "peak_dense." + dt, "expected one of fp32, fp16, bf16, fp8, int8, int4");
      }
      number(gpu, "peak_" + dt, entry.second, "peak_dense." + dt);
    }
    for (const char* required : {"hbm_bandwidth", "memory", "num_sms", "l2", "clock"}) {
      if (!root_[required]) fail(root_, required, "missing");
    }
    for (const auto& [key, citation] : sources_) {
      if (used_.count(key) == 0) fail(root_["sources"], "sources." + key, "not cited by any number");
      gpu.source += (gpu.source.empty() ? "" : "; ") + citation;
    }
    return gpu;
  }

 private:
  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& what) const {
    const YAML::Mark mark = at.Mark();
    const std::string where =
        mark.line >= 0 ? origin_ + ":" + std::to_string(mark.line + 1) : origin_;
    throw SpecError(where, key, what);
  }

  // `prefix` is the key path of `map` for messages ("memory." -> "memory.source").
  std::string text(const YAML::Node& map, const char* key, bool required,
                   const std::string& prefix = "") const {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) fail(map, prefix + key, "missing");
      return "";
    }
    if (!n.IsScalar() || n.Scalar().empty()) fail(n, prefix + key, "expected a non-empty string");
    return n.Scalar();
  }

  void read_sources() {
    const YAML::Node s = root_["sources"];
    if (!s || !s.IsMap() || s.size() == 0) {
      fail(s ? s : root_, "sources", "expected a mapping of source name -> citation");
    }
    for (const auto& entry : s) {
      const std::string key = entry.first.as<std::string>();
      if (!entry.second.IsScalar() || entry.second.Scalar().empty()) {
        fail(entry.second, "sources." + key, "expected a citation string");
      }
      sources_[key] = entry.second.Scalar();
    }
  }

  // `{value: ..., source: ..., note: ...}` -> the field, with its citation recorded.
  void number(GpuSpec& gpu, const std::string& field, const YAML::Node& node,
              const std::string& key) {
    if (!node.IsMap()) fail(node, key, "expected {value: ..., source: ...}");
    for (const auto& entry : node) {
      const std::string k = entry.first.as<std::string>();
      if (k != "value" && k != "source" && k != "note") {
        fail(entry.first, key + "." + k, "unknown key (expected value, source, note)");
      }
    }
    const std::string value = text(node, "value", true, key + ".");
    const std::string source = text(node, "source", true, key + ".");
    const auto cited = sources_.find(source);
    if (cited == sources_.end()) {
      fail(node["source"], key + ".source", "'" + source + "' is not a key of sources");
    }
    used_.insert(source);
    try {
      set_gpu_field(gpu, field, value);
    } catch (const std::invalid_argument& e) {
      fail(node["value"], key + ".value", e.what());
    }
    gpu.sources[field] = cited->second;
  }

  const YAML::Node& root_;
  const std::string& origin_;
  std::map<std::string, std::string> sources_;
  std::set<std::string> used_;
};

}  // namespace

GpuSpec parse_gpu_spec(std::string_view yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw SpecError(origin + ":" + std::to_string(e.mark.line + 1), "",
                    "not valid YAML: " + e.msg);
  }
  return Loader(root, origin).load();
}

GpuSpec load_gpu_spec(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SpecError(path, "", "cannot read file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_gpu_spec(text.str(), path);
}

}  // namespace ks::kernels
