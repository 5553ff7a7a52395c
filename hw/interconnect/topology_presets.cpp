// Built-in topologies. Bandwidths are per direction. Link latencies, NVLink bandwidths, NCCL's
// protocol, NVLS and local-copy costs and the per-collective overhead are effective values fitted to
// measured all-reduces (what tensor parallelism sends) by `kernelsight validate-collectives`
// (docs/validation-collectives.md, whose last table checks these defaults against the fit):
// dgx_a100, dgx_h100, hgx_h200, hgx_b200 and pcie_l40s on each system's AIConfigurator nccl-tests
// table (dgx_a100's InfiniBand from vidur's two-node A100 cluster, 5.8 GB/s per GPU pair, well below
// HDR's 25 GB/s: set ib_bandwidth for your fabric), pcie_pairwise_nvlink on vidur's A100 PCIe
// pairs. Parameters without
// measurements keep spec-derived values: PCIe Gen4 x16 24 GB/s and Gen5 48 GB/s (NCCL's own
// topology figures), InfiniBand NDR 400 Gb/s ~ 45 GB/s.
#include "hw/interconnect/topology_presets.hpp"

#include <stdexcept>

#include "base/config/document.hpp"

namespace ks::interconnect {
namespace {

struct Defaults {
  int gpus_per_node;
  const char* nvlink_bw;
  const char* nvlink_lat;
  const char* pcie_bw;
  const char* pcie_lat;
  const char* ib_bw;
  const char* ib_lat;
  const char* overhead;
  double latency_scale;
  const char* ll_max_bw;
  double nvls_efficiency;
  const char* nvls_latency;  // "0s": NCCL's tuner value
  const char* local_copy_bw;
  const char* custom_ar_latency;
  // PCIe servers whose GPUs sit in pairs on PCIe switches (pcie_l40s): the bandwidth of a switch's
  // uplink through the host bridge, per direction (nullptr: the preset has no such parameter).
  const char* host_bw = nullptr;
};

config::Schema preset_schema(const std::string& doc, const Defaults& d) {
  config::Schema s(doc);
  s.integer("nodes", 1, "nodes (servers); more than one are joined by InfiniBand, one NIC per GPU", 1, 4096)
      .integer("gpus_per_node", d.gpus_per_node, "GPUs per node", 1, 576)
      .quantity("nvlink_bandwidth", config::Dim::Bandwidth, std::string(d.nvlink_bw),
                "NVLink bandwidth per GPU and direction")
      .quantity("nvlink_latency", config::Dim::Time, std::string(d.nvlink_lat),
                "latency of a GPU-to-GPU transfer over NVLink", 0.0, false)
      .quantity("pcie_bandwidth", config::Dim::Bandwidth, std::string(d.pcie_bw),
                "PCIe bandwidth per device link and direction")
      .quantity("pcie_latency", config::Dim::Time, std::string(d.pcie_lat), "latency of a GPU-to-GPU transfer over PCIe", 0.0, false)
      .quantity("ib_bandwidth", config::Dim::Bandwidth, std::string(d.ib_bw),
                "InfiniBand bandwidth per NIC and direction")
      .quantity("ib_latency", config::Dim::Time, std::string(d.ib_lat), "latency of one InfiniBand hop (NIC-switch); GPU-to-GPU across nodes crosses two", 0.0, false)
      .quantity("collective_overhead", config::Dim::Time, std::string(d.overhead),
                "fixed cost per collective (launch, NCCL synchronisation)", 0.0, false)
      .number("nccl_latency_scale", d.latency_scale,
              "factor on NCCL's tuning-model latencies per algorithm, protocol and hop (0: none, plain alpha-beta)",
              0.0, 10.0)
      .quantity("ll_max_bandwidth", config::Dim::Bandwidth, std::string(d.ll_max_bw),
                "cap on the bus bandwidth of NCCL's LL protocol (NCCL's llMaxBws for the GPU generation; 0: none)",
                0.0, false)
      .number("nvls_efficiency", d.nvls_efficiency,
              "NVLS all-reduce bus bandwidth / (2 x NVLink bandwidth) (NVSwitch with SHARP, Hopper and later; 0: no NVLS)",
              0.0, 1.0)
      .quantity("nvls_latency", config::Dim::Time, std::string(d.nvls_latency),
                "fixed latency of an NVLS all-reduce (0: NCCL's tuning model, 25 us x nccl_latency_scale)", 0.0,
                false)
      .quantity("local_copy_bandwidth", config::Dim::Bandwidth, std::string(d.local_copy_bw),
                "rate at which a collective's kernel copies or reduces a rank's own chunk (0: free)", 0.0, false)
      .quantity("custom_allreduce_max_bytes", config::Dim::Bytes, std::string("0B"),
                "all-reduces below this size run the serving engine's custom all-reduce instead of NCCL "
                "(0: never; engine profiles vllm, vllm_v0, sglang set 8MiB, vLLM's default)",
                0.0, false)
      .quantity("custom_allreduce_latency", config::Dim::Time, std::string(d.custom_ar_latency),
                "fixed cost of the engine's custom all-reduce (launch and barriers; fitted to vLLM's under CUDA graphs)",
                0.0, false);
  if (d.host_bw)
    s.quantity("host_bandwidth", config::Dim::Bandwidth, std::string(d.host_bw),
               "bandwidth of GPU-to-GPU traffic between PCIe switches, through the host bridge (CPU root "
               "complex), per switch uplink and direction");
  return s;
}

void set_collective_costs(Topology& t, const config::Params& p) {
  t.set_collective_overhead(p.number("collective_overhead"));
  t.set_protocol_costs({p.number("nccl_latency_scale"), p.number("ll_max_bandwidth"), p.number("nvls_efficiency"),
                        p.number("nvls_latency"), p.number("local_copy_bandwidth"),
                        p.number("custom_allreduce_max_bytes"), p.number("custom_allreduce_latency")});
}

// Per node: GPUs on the node's intra-node fabric; across nodes: GPU -PCIe- NIC -IB- IB switch.
void add_infiniband(Topology& t, const config::Params& p) {
  if (t.nodes() < 2) return;
  const int ib_switch = t.add_switch("ib_switch", SwitchKind::IbSwitch, -1);
  for (int g = 0; g < t.num_gpus(); ++g) {
    const int nic = t.add_switch("node" + std::to_string(t.node_of(g)) + "_nic" + std::to_string(g % t.gpus_per_node()),
                                 SwitchKind::IbNic, t.node_of(g));
    // GPUDirect RDMA: the NIC sits on the GPU's PCIe switch; the NIC, not PCIe, is the limit.
    t.add_duplex(g, nic, LinkType::PCIe, p.number("ib_bandwidth"), 0.0);
    t.add_duplex(nic, ib_switch, LinkType::InfiniBand, p.number("ib_bandwidth"), p.number("ib_latency"));
  }
}

std::unique_ptr<Topology> nvswitch_topology(const std::string& name, const config::Params& p) {
  auto t = std::make_unique<Topology>(name, static_cast<int>(p.integer("nodes")),
                                      static_cast<int>(p.integer("gpus_per_node")));
  set_collective_costs(*t, p);
  // The NVSwitch latency is split over the two hops of a GPU -> switch -> GPU route.
  const double half = p.number("nvlink_latency") / 2;
  for (int node = 0; node < t->nodes(); ++node) {
    const int sw = t->add_switch("node" + std::to_string(node) + "_nvswitch", SwitchKind::NVSwitch, node);
    for (int i = 0; i < t->gpus_per_node(); ++i)
      t->add_duplex(node * t->gpus_per_node() + i, sw, LinkType::NVLink, p.number("nvlink_bandwidth"), half);
  }
  add_infiniband(*t, p);
  return t;
}

// NVLink bridges join GPUs 2k and 2k+1; each pair shares a PCIe switch; switches meet at the
// host bridge (root complex), so cross-pair traffic crosses PCIe twice.
std::unique_ptr<Topology> pairwise_topology(const config::Params& p, const config::SourceMark& mark) {
  const int per_node = static_cast<int>(p.integer("gpus_per_node"));
  if (per_node % 2 != 0)
    throw config::ConfigError(mark, p.path() + ".gpus_per_node",
                              "pcie_pairwise_nvlink needs an even number of GPUs per node, got " +
                                  std::to_string(per_node));
  auto t = std::make_unique<Topology>("pcie_pairwise_nvlink", static_cast<int>(p.integer("nodes")), per_node);
  set_collective_costs(*t, p);
  const double pcie_hop = p.number("pcie_latency") / 4;  // GPU-switch-root-switch-GPU
  for (int node = 0; node < t->nodes(); ++node) {
    const int root = t->add_switch("node" + std::to_string(node) + "_host_bridge", SwitchKind::HostBridge, node);
    for (int pair = 0; pair < per_node / 2; ++pair) {
      const int a = node * per_node + 2 * pair;
      const int sw = t->add_switch("node" + std::to_string(node) + "_pcie_switch" + std::to_string(pair),
                                   SwitchKind::PCIeSwitch, node);
      t->add_duplex(a, a + 1, LinkType::NVLink, p.number("nvlink_bandwidth"), p.number("nvlink_latency"));
      t->add_duplex(a, sw, LinkType::PCIe, p.number("pcie_bandwidth"), pcie_hop);
      t->add_duplex(a + 1, sw, LinkType::PCIe, p.number("pcie_bandwidth"), pcie_hop);
      t->add_duplex(sw, root, LinkType::PCIe, p.number("pcie_bandwidth"), pcie_hop);
    }
  }
  add_infiniband(*t, p);
  return t;
}

// No NVLink: GPUs in pairs on PCIe switches (GPUs 2k and 2k+1), the switches on the node's host
// bridge. Within a pair, peer-to-peer through the switch at the GPU's PCIe link rate; between
// pairs, through the host bridge (the CPU root complex), whose rate for GPU peer traffic is far
// below the links' (host_bandwidth per switch uplink and direction: every transfer between pairs
// holds one uplink of each switch). The PCIe latency is split over the GPU-switch hops.
std::unique_ptr<Topology> pcie_topology(const std::string& name, const config::Params& p) {
  auto t = std::make_unique<Topology>(name, static_cast<int>(p.integer("nodes")),
                                      static_cast<int>(p.integer("gpus_per_node")));
  set_collective_costs(*t, p);
  const double half = p.number("pcie_latency") / 2;
  for (int node = 0; node < t->nodes(); ++node) {
    const int root = t->add_switch("node" + std::to_string(node) + "_host_bridge", SwitchKind::HostBridge, node);
    int sw = -1;
    for (int i = 0; i < t->gpus_per_node(); ++i) {
      if (i % 2 == 0) {
        sw = t->add_switch("node" + std::to_string(node) + "_pcie_switch" + std::to_string(i / 2),
                           SwitchKind::PCIeSwitch, node);
        t->add_duplex(sw, root, LinkType::PCIe, p.number("host_bandwidth"), 0.0);
      }
      t->add_duplex(node * t->gpus_per_node() + i, sw, LinkType::PCIe, p.number("pcie_bandwidth"), half);
    }
  }
  add_infiniband(*t, p);
  return t;
}

void add_preset(const std::string& kind, const std::string& doc, const Defaults& d) {
  config::Schema schema = preset_schema(doc, d);
  topology_registry().add(kind, {doc, schema, [kind](const config::Params& p) -> std::unique_ptr<Topology> {
                                   if (kind == "pcie_pairwise_nvlink") return pairwise_topology(p, p.mark("gpus_per_node"));
                                   if (kind == "pcie_l40s") return pcie_topology(kind, p);
                                   return nvswitch_topology(kind, p);
                                 }});
}

const bool registered = [] {
  // HDR InfiniBand 200 Gb/s = 25 GB/s, NDR 400 Gb/s = 50 GB/s per NIC; PCIe Gen4 x16 32 GB/s,
  // Gen5 x16 64 GB/s per direction.
  // Defaults: {GPUs per node, NVLink bw, NVLink latency, PCIe bw, PCIe latency, IB bw, IB latency,
  // collective overhead, NCCL latency scale, LL bus-bandwidth cap, NVLS efficiency, NVLS latency,
  // local copy bw, custom all-reduce latency (fitted to vLLM's under CUDA graphs, AIConfigurator)}.
  // Fitted (docs/validation-collectives.md) unless marked spec: the LL cap is NCCL's llMaxBws for the
  // GPU generation (tuning.cc: Ampere 87.7, Hopper 141, Blackwell 2 x 141 GB/s); PCIe and IB figures
  // of NVSwitch presets are spec-derived (no single-link measurement).
  add_preset("dgx_a100", "DGX A100: 8 A100 SXM per node on NVSwitch (300 GB/s per direction), InfiniBand",
             {8, "225.9GB/s", "868ns", "24GB/s", "10us", "5.9GB/s", "6.368us", "458ns", 1.34, "87.7GB/s", 0.0, "0s",
              "456.6GB/s", "4.828us"});
  add_preset("dgx_h100", "DGX H100: 8 H100 SXM per node on NVSwitch (450 GB/s per direction), NDR InfiniBand",
             {8, "317.6GB/s", "762ns", "48GB/s", "10us", "45GB/s", "8us", "1.266us", 0.589, "141GB/s", 0.724,
              "53.03us", "558.7GB/s", "3.904us"});
  // HGX H200: the H100's NVLink 4 and third-generation NVSwitch (900 GB/s per GPU bidirectional, NVIDIA
  // H200 data sheet), 141 GB HBM3e.
  add_preset("hgx_h200", "HGX H200: 8 H200 per node on NVSwitch (450 GB/s per direction, NVLink 4 as H100), NDR InfiniBand",
             {8, "307.4GB/s", "826ns", "48GB/s", "10us", "45GB/s", "8us", "1.539us", 0.523, "141GB/s", 0.769,
              "54.095us", "523.3GB/s", "3.81us"});
  add_preset("hgx_b200", "HGX B200: 8 B200 per node on NVSwitch (900 GB/s per direction), NDR InfiniBand",
             {8, "566.9GB/s", "1.292us", "48GB/s", "10us", "45GB/s", "8us", "937ns", 1.04, "282GB/s", 0.625,
              "55.648us", "1.9465TB/s", "6.056us"});
  // A GPU without a measured system of its own (hw/interconnect/fabric_transfer.hpp): an NVSwitch
  // node whose figures are the transfer of the four measured ones (dgx_a100, dgx_h100, hgx_h200,
  // hgx_b200): the means of their latencies, overhead, NCCL latency scale and custom all-reduce
  // latency; the link and local copy as their mean ratios to the spec, here for an NVLink 4 class
  // link (450 GB/s per direction). A scenario on such a GPU sets the link, local copy, NVLS and LL
  // cap from the GPU's spec and generation; tests check these against the measured presets.
  add_preset("nvswitch",
             "Generic NVSwitch node, 8 GPUs, links transferred from the measured NVSwitch systems "
             "(default link of an NVLink 4 GPU: 450 GB/s per direction x 0.69); scenarios set it from the GPU",
             {8, "311.2GB/s", "937ns", "48GB/s", "10us", "45GB/s", "8us", "1.05us", 0.873, "0GB/s", 0.0, "0s",
              "646.4GB/s", "4.65us"});
  add_preset("pcie_pairwise_nvlink",
             "PCIe server with NVLink bridges between GPU pairs (A100 PCIe: 300 GB/s per direction); "
             "cross-pair traffic over PCIe through the host bridge",
             {4, "180.7GB/s", "667ns", "24GB/s", "10us", "22GB/s", "10us", "0us", 1.72, "87.7GB/s", 0.0, "0s",
              "0GB/s", "4.538us"});  // custom all-reduce latency: no measurement, the mean of the five fitted systems
  // L40S: no NVLink (NVIDIA L40S data sheet: PCIe Gen4 x16, 64 GB/s bidirectional); Ada shares
  // Ampere's NCCL LL cap (compute capability 8.9 < 9.0 in tuning.cc).
  add_preset("pcie_l40s",
             "PCIe server without NVLink (L40S: PCIe Gen4 x16, 32 GB/s per direction); GPUs in pairs on PCIe "
             "switches, traffic between pairs through the host bridge",
             {8, "450GB/s", "1us", "24GB/s", "1.323us", "25GB/s", "8us", "321ns", 0.472, "87.7GB/s", 0.0, "0s",
              "59.6GB/s", "4.216us", "24GB/s"});
  // host_bandwidth: the link rate, not AIConfigurator's L40S server's fitted 5.2 GB/s (its 4- and
  // 8-GPU nccl-tests run at 5 and 1.5 GB/s of bus bandwidth): TensorRT-LLM's published L40S TP4/TP8
  // throughput is 2-3x what that rate allows (docs/hardware.md). Set 5.2GB/s for such a server.
  return true;
}();

}  // namespace

config::Params preset_defaults(const std::string& kind) {
  if (!topology_registry().has(kind)) throw std::invalid_argument("unknown topology '" + kind + "'");
  config::Document doc = config::Document::parse("kind: " + kind + "\n", "<topology " + kind + ">");
  return doc.root().resolve(topology_registry().get(kind, {}, "topology").schema);
}

std::unique_ptr<Topology> make_preset(const std::string& kind, int nodes, int gpus_per_node) {
  if (!topology_registry().has(kind)) throw std::invalid_argument("unknown topology '" + kind + "'");
  std::string yaml = "kind: " + kind + "\n";
  if (nodes > 0) yaml += "nodes: " + std::to_string(nodes) + "\n";
  if (gpus_per_node > 0) yaml += "gpus_per_node: " + std::to_string(gpus_per_node) + "\n";
  config::Document doc = config::Document::parse(yaml, "<topology " + kind + ">");
  const auto& entry = topology_registry().get(kind, {}, "topology");
  return entry.make(doc.root().resolve(entry.schema));
}

}  // namespace ks::interconnect
