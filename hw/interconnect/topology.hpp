#pragma once
// The fabric between GPUs as a directed graph: vertices are GPUs (ids 0..num_gpus-1, global over
// all nodes) and switches (NVSwitch, PCIe switch, host bridge, InfiniBand NIC/switch); every edge
// is one direction of a physical link with its own bandwidth and latency. Pure C++ (no SystemC):
// the collective CLI and the validation use it without a simulation.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hw/interconnect/collective_schedule.hpp"

namespace ks::interconnect {

enum class LinkType { NVLink, PCIe, InfiniBand };
enum class SwitchKind { NVSwitch, PCIeSwitch, HostBridge, IbNic, IbSwitch };

std::string_view link_type_name(LinkType type);
std::string_view switch_kind_name(SwitchKind kind);

struct LinkSpec {
  std::string name;  // "gpu0->nvswitch0"
  LinkType type;
  int from;          // vertex ids
  int to;
  double bandwidth;  // B/s in this direction
  double latency;    // s, per transfer (propagation + per-message protocol cost)
};

struct SwitchSpec {
  std::string name;
  SwitchKind kind;
  int node;
};

class Topology {
 public:
  Topology(std::string name, int nodes, int gpus_per_node);

  const std::string& name() const { return name_; }
  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int num_gpus() const { return nodes_ * gpus_per_node_; }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  // Per-collective fixed cost (kernel launch, NCCL setup/synchronisation), added once.
  double collective_overhead() const { return collective_overhead_; }
  void set_collective_overhead(double s) { collective_overhead_ = s; }
  // What NCCL's protocols cost on this fabric (collective_schedule.hpp).
  const ProtocolCosts& protocol_costs() const { return protocol_costs_; }
  void set_protocol_costs(const ProtocolCosts& costs) { protocol_costs_ = costs; }

  int add_switch(std::string name, SwitchKind kind, int node);  // returns its vertex id
  // Adds both directions; returns the id of the a->b link (b->a is id + 1).
  int add_duplex(int a, int b, LinkType type, double bandwidth, double latency);

  const std::vector<LinkSpec>& links() const { return links_; }
  const std::vector<SwitchSpec>& switches() const { return switches_; }
  std::string vertex_name(int vertex) const;

  // The links a transfer from GPU src to GPU dst crosses: fewest hops, ties broken by lower
  // vertex ids (deterministic). Throws std::invalid_argument if unreachable or ids out of range.
  const std::vector<int>& route(int src, int dst) const;
  // Sum of latencies and the bottleneck bandwidth along route(src, dst).
  double path_latency(int src, int dst) const;
  double path_bandwidth(int src, int dst) const;

 private:
  std::string name_;
  int nodes_, gpus_per_node_;
  double collective_overhead_ = 0;
  ProtocolCosts protocol_costs_;
  std::vector<SwitchSpec> switches_;  // vertex id = num_gpus() + index
  std::vector<LinkSpec> links_;
  std::vector<std::vector<int>> out_;  // per vertex: outgoing link ids
  // route() results by src * num_gpus() + dst (node-based: returned references stay valid).
  mutable std::unordered_map<std::int64_t, std::vector<int>> routes_;
};

}  // namespace ks::interconnect
