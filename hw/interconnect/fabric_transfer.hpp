#pragma once
// The fabric a scenario gets when it names no topology: the measured system of its GPU where one
// exists (its preset, the fits of docs/validation-collectives.md), otherwise the transferred model
// built from the GPU's spec sheet: its scale-up (or PCIe) link times the fitted-to-spec ratio of
// the measured systems, their NCCL costs, and NVLS and the LL cap by the GPU's generation as NCCL
// sets them. A GPU whose link differs from its measured system's (a what-if) keeps that system's
// costs with the link scaled by the spec ratio. Pure C++ (no GPU catalog: the caller passes the
// link figures).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/config/schema.hpp"
#include "hw/interconnect/topology.hpp"

namespace ks::interconnect {

// What the fabric needs from a GPU's spec sheet. Bandwidths are bidirectional totals per GPU, as
// the catalogue (and vendors) quote them; 0 = no such link.
struct ScaleUpLinks {
  std::string gpu;         // catalogue name ("" for a spec file of its own)
  std::string vendor;      // "nvidia", "amd"
  std::string generation;  // "ampere", "hopper", "blackwell", ...
  std::string scale_up;    // "switch", "bridge" or "" (switch when nvlink_bandwidth > 0)
  double nvlink_bandwidth = 0;
  double pcie_bandwidth = 0;
};

struct DefaultFabric {
  std::string kind;                      // a registered topology kind
  std::map<std::string, double> params;  // SI values of the keys the scenario did not set itself
  std::string basis;                     // where the figures come from, one line
};

DefaultFabric default_fabric(const ScaleUpLinks& gpu);

// The schema of the fabric's kind with its values as the defaults: what a scenario resolves its
// topology section with (so config.resolved.yaml shows what runs, and a key the scenario sets wins).
config::Schema default_fabric_schema(const DefaultFabric& fabric);

// The topology of default_fabric() with `nodes` nodes (0: the preset's).
std::unique_ptr<Topology> make_default_fabric(const ScaleUpLinks& gpu, int nodes = 0);

// The measured NVSwitch systems' transfer, from their presets' defaults: geometric mean of the
// fitted NVLink bandwidth over the spec per direction, mean local-copy-to-spec ratio (as an
// inverse mean), mean NVLS efficiency over NCCL's figure for the architecture, mean NVLS latency,
// and the means of their latencies, overhead, NCCL latency scale and custom all-reduce latency.
// `without`: presets left out (the check of the rule on a measured system leaves its generation out).
struct SwitchTransfer {
  double link_ratio = 0;
  double local_copy_ratio = 0;
  double nvls_ratio = 0;
  double nvls_latency = 0;  // s
  std::map<std::string, double> means;  // nvlink_latency, collective_overhead, nccl_latency_scale, ...
};
SwitchTransfer switch_transfer(const std::vector<std::string>& without = {});

// The generic `nvswitch` fabric of a GPU with a switched scale-up link, from that transfer.
DefaultFabric transferred_switch_fabric(const ScaleUpLinks& gpu, const std::vector<std::string>& without = {});

// The measured NVSwitch systems the transfer learns from, with their GPUs' generations.
struct SwitchSystem {
  const char* preset;
  const char* generation;
};
const std::vector<SwitchSystem>& switch_systems();

// A fabric's topology with `nodes` nodes (0: the kind's default).
std::unique_ptr<Topology> make_fabric(const DefaultFabric& fabric, int nodes = 0);

// NCCL's per-architecture figures (NVIDIA/nccl 5067397c, src/graph/tuning.cc): nvlsEfficiency
// (Hopper 0.85, Blackwell 0.74; 0: no NVLS) and llMaxBws for one node (Ampere and Ada 87.7,
// Hopper 141, Blackwell 282 GB/s; 0: no cap known, e.g. AMD's RCCL).
double nccl_nvls_efficiency(const std::string& generation);
double nccl_ll_max_bandwidth(const std::string& vendor, const std::string& generation);

}  // namespace ks::interconnect
