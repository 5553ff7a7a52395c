#include "hw/interconnect/fabric_transfer.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "base/config/document.hpp"
#include "base/config/units.hpp"
#include "hw/interconnect/topology_presets.hpp"

namespace ks::interconnect {
namespace {

// The systems whose collectives were measured, by the catalogue GPU they hold, with the spec-sheet
// link rate per direction of that GPU (what a fitted bandwidth is a ratio of).
struct Measured {
  const char* gpu;
  const char* preset;
  double spec;  // B/s per direction: NVLink, or PCIe for pcie_l40s
};
constexpr Measured kMeasured[] = {
    {"a100_sxm_80gb", "dgx_a100", 300e9}, {"a100_sxm_40gb", "dgx_a100", 300e9},
    {"h100_sxm", "dgx_h100", 450e9},      {"h200", "hgx_h200", 450e9},
    {"b200", "hgx_b200", 900e9},          {"a100_pcie_80gb", "pcie_pairwise_nvlink", 300e9},
    {"l40s", "pcie_l40s", 32e9}};
// GPUs of a server with NVLink-bridged pairs, as the NVSwitch and PCIe presets have (the preset's
// own 4 is vidur's measured A100 PCIe box; its A40 box had 8).
constexpr double kPairwiseServerGpus = 8;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

double spec_of(const char* preset) {
  for (const Measured& m : kMeasured)
    if (std::string(m.preset) == preset) return m.spec;
  return 0;
}

std::string gbps(double bytes_per_s) { return config::format_quantity(bytes_per_s, config::Dim::Bandwidth); }

// Figures as a preset would state them: bandwidths to 0.1 GB/s, times to 1 ns, numbers to 3 digits.
void round_params(DefaultFabric& f) {
  for (auto& [key, value] : f.params) {
    const bool time = key.find("latency") != std::string::npos || key == "collective_overhead";
    const bool bandwidth = key.find("bandwidth") != std::string::npos;
    // Divide by the inverse of a sub-unit step: 937e-9, not 937.0000000000001e-9.
    value = bandwidth ? std::round(value / 1e8) * 1e8 : std::round(value * (time ? 1e9 : 1e3)) / (time ? 1e9 : 1e3);
  }
}

}  // namespace

double nccl_nvls_efficiency(const std::string& generation) {
  return generation == "hopper" ? 0.85 : generation == "blackwell" ? 0.74 : 0.0;
}

double nccl_ll_max_bandwidth(const std::string& vendor, const std::string& generation) {
  if (vendor != "nvidia") return 0.0;
  if (generation == "blackwell") return 282e9;
  if (generation == "hopper") return 141e9;
  return 87.7e9;  // Volta to Ada (compute capability below 9.0)
}

const std::vector<SwitchSystem>& switch_systems() {
  static const std::vector<SwitchSystem> systems = {
      {"dgx_a100", "ampere"}, {"dgx_h100", "hopper"}, {"hgx_h200", "hopper"}, {"hgx_b200", "blackwell"}};
  return systems;
}

SwitchTransfer switch_transfer(const std::vector<std::string>& without) {
  static const char* const kMeanKeys[] = {"nvlink_latency", "collective_overhead", "nccl_latency_scale",
                                          "custom_allreduce_latency"};
  double log_link = 0, inv_local = 0, nvls = 0, nvls_latency = 0;
  int n = 0, n_nvls = 0;
  SwitchTransfer t;
  for (const SwitchSystem& s : switch_systems()) {
    if (std::find(without.begin(), without.end(), s.preset) != without.end()) continue;
    const config::Params p = preset_defaults(s.preset);
    const double spec = spec_of(s.preset);
    log_link += std::log(p.number("nvlink_bandwidth") / spec);
    inv_local += spec / p.number("local_copy_bandwidth");
    for (const char* key : kMeanKeys) t.means[key] += p.number(key);
    ++n;
    if (p.number("nvls_efficiency") > 0 && nccl_nvls_efficiency(s.generation) > 0) {
      nvls += p.number("nvls_efficiency") / nccl_nvls_efficiency(s.generation);
      nvls_latency += p.number("nvls_latency");
      ++n_nvls;
    }
  }
  if (n == 0) throw std::invalid_argument("switch_transfer: every measured NVSwitch system left out");
  for (auto& [key, sum] : t.means) sum /= n;
  t.link_ratio = std::exp(log_link / n);
  t.local_copy_ratio = n / inv_local;
  t.nvls_ratio = n_nvls > 0 ? nvls / n_nvls : 0.0;
  t.nvls_latency = n_nvls > 0 ? nvls_latency / n_nvls : 0.0;
  return t;
}

DefaultFabric transferred_switch_fabric(const ScaleUpLinks& gpu, const std::vector<std::string>& without) {
  const double nvlink = gpu.nvlink_bandwidth / 2, pcie = gpu.pcie_bandwidth / 2;
  const SwitchTransfer t = switch_transfer(without);
  DefaultFabric f;
  f.kind = "nvswitch";
  f.params = t.means;
  f.params["nvlink_bandwidth"] = nvlink * t.link_ratio;
  f.params["local_copy_bandwidth"] = nvlink * t.local_copy_ratio;
  const double nvls = gpu.vendor == "nvidia" ? std::min(1.0, nccl_nvls_efficiency(gpu.generation) * t.nvls_ratio) : 0.0;
  f.params["nvls_efficiency"] = nvls;
  f.params["nvls_latency"] = nvls > 0 ? t.nvls_latency : 0.0;
  f.params["ll_max_bandwidth"] = nccl_ll_max_bandwidth(gpu.vendor, gpu.generation);
  if (pcie > 0) f.params["pcie_bandwidth"] = pcie * preset_defaults("pcie_l40s").number("pcie_bandwidth") / spec_of("pcie_l40s");
  f.basis = "transferred: the GPU's " + gbps(nvlink) + " per direction x " + std::to_string(t.link_ratio).substr(0, 5) +
            " and the NCCL costs of the measured NVSwitch systems";
  return f;
}

namespace {

// The measured system of the GPU (its link scaled by a what-if), else the transfer by layout.
DefaultFabric measured_or_transferred(const ScaleUpLinks& gpu) {
  const double nvlink = gpu.nvlink_bandwidth / 2, pcie = gpu.pcie_bandwidth / 2;  // per direction
  DefaultFabric f;
  for (const Measured& m : kMeasured) {
    if (lower(gpu.gpu) != m.gpu) continue;
    f.kind = m.preset;
    f.basis = std::string("measured: ") + m.preset + "'s collectives (docs/validation-collectives.md)";
    if (f.kind == "pcie_pairwise_nvlink") f.params["gpus_per_node"] = kPairwiseServerGpus;
    // A what-if of the GPU's link: the system's costs, its link scaled by the spec ratio.
    const bool pcie_system = f.kind == "pcie_l40s";
    const double link = pcie_system ? pcie : nvlink;
    if (link > 0 && std::fabs(link / m.spec - 1) > 1e-9) {
      const config::Params p = preset_defaults(f.kind);
      const double ratio = link / m.spec;
      const std::vector<std::string> keys =
          pcie_system ? std::vector<std::string>{"pcie_bandwidth", "host_bandwidth"} : std::vector<std::string>{"nvlink_bandwidth"};
      for (const std::string& key : keys) f.params[key] = p.number(key) * ratio;
      f.basis += "; its link x " + std::to_string(ratio).substr(0, 5) + " (the GPU's spec over " + m.gpu + "'s)";
    }
    return f;
  }
  const double pcie_ratio = preset_defaults("pcie_l40s").number("pcie_bandwidth") / spec_of("pcie_l40s");
  const double ll_cap = nccl_ll_max_bandwidth(gpu.vendor, gpu.generation);
  if (nvlink > 0 && gpu.scale_up != "bridge") return transferred_switch_fabric(gpu);
  if (nvlink > 0) {
    const double bridge_ratio = preset_defaults("pcie_pairwise_nvlink").number("nvlink_bandwidth") / spec_of("pcie_pairwise_nvlink");
    f.kind = "pcie_pairwise_nvlink";
    f.params["gpus_per_node"] = kPairwiseServerGpus;
    f.params["nvlink_bandwidth"] = nvlink * bridge_ratio;
    if (pcie > 0) f.params["pcie_bandwidth"] = pcie * pcie_ratio;
    f.params["ll_max_bandwidth"] = ll_cap;
    f.basis = "transferred: NVLink bridges at the GPU's " + gbps(nvlink) + " per direction x " +
              std::to_string(bridge_ratio).substr(0, 5) + " (pcie_pairwise_nvlink's A100 PCIe fit)";
    return f;
  }
  f.kind = "pcie_l40s";
  if (pcie > 0) f.params["pcie_bandwidth"] = f.params["host_bandwidth"] = pcie * pcie_ratio;
  f.params["ll_max_bandwidth"] = ll_cap;
  f.basis = "transferred: PCIe at the GPU's " + gbps(pcie) + " per direction x " + std::to_string(pcie_ratio).substr(0, 5) +
            " and pcie_l40s's NCCL costs (the measured PCIe system)";
  return f;
}

}  // namespace

DefaultFabric default_fabric(const ScaleUpLinks& gpu) {
  DefaultFabric f = measured_or_transferred(gpu);
  round_params(f);
  return f;
}

config::Schema default_fabric_schema(const DefaultFabric& fabric) {
  const config::Schema& schema = topology_registry().get(fabric.kind, {}, "topology").schema;
  config::Schema out(schema.doc());
  for (config::ParamSpec spec : schema.params()) {
    const auto it = fabric.params.find(spec.name);
    if (it != fabric.params.end()) {
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", it->second);
      spec.default_text = spec.type == config::ParamType::Quantity ? config::format_quantity(it->second, spec.dim)
                                                                    : std::string(text);
    }
    out.add(spec);
  }
  return out;
}

std::unique_ptr<Topology> make_default_fabric(const ScaleUpLinks& gpu, int nodes) {
  return make_fabric(default_fabric(gpu), nodes);
}

std::unique_ptr<Topology> make_fabric(const DefaultFabric& f, int nodes) {
  std::string yaml = "kind: " + f.kind + "\n";
  if (nodes > 0) yaml += "nodes: " + std::to_string(nodes) + "\n";
  config::Document doc = config::Document::parse(yaml, "<default fabric>");
  return topology_registry().get(f.kind, {}, "topology").make(doc.root().resolve(default_fabric_schema(f)));
}

}  // namespace ks::interconnect
