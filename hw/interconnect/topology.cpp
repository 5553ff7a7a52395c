#include "hw/interconnect/topology.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>

namespace ks::interconnect {

std::string_view link_type_name(LinkType type) {
  switch (type) {
    case LinkType::NVLink: return "nvlink";
    case LinkType::PCIe: return "pcie";
    case LinkType::InfiniBand: return "infiniband";
  }
  return "?";
}

std::string_view switch_kind_name(SwitchKind kind) {
  switch (kind) {
    case SwitchKind::NVSwitch: return "nvswitch";
    case SwitchKind::PCIeSwitch: return "pcie_switch";
    case SwitchKind::HostBridge: return "host_bridge";
    case SwitchKind::IbNic: return "ib_nic";
    case SwitchKind::IbSwitch: return "ib_switch";
  }
  return "?";
}

Topology::Topology(std::string name, int nodes, int gpus_per_node)
    : name_(std::move(name)), nodes_(nodes), gpus_per_node_(gpus_per_node) {
  if (nodes < 1 || gpus_per_node < 1) throw std::invalid_argument("topology needs >= 1 node and GPU per node");
  out_.resize(static_cast<std::size_t>(num_gpus()));
}

int Topology::add_switch(std::string name, SwitchKind kind, int node) {
  switches_.push_back({std::move(name), kind, node});
  out_.emplace_back();
  return num_gpus() + static_cast<int>(switches_.size()) - 1;
}

std::string Topology::vertex_name(int v) const {
  if (v < num_gpus()) return "gpu" + std::to_string(v);
  return switches_.at(static_cast<std::size_t>(v - num_gpus())).name;
}

int Topology::add_duplex(int a, int b, LinkType type, double bandwidth, double latency) {
  if (bandwidth <= 0 || latency < 0) throw std::invalid_argument("link needs bandwidth > 0 and latency >= 0");
  const int id = static_cast<int>(links_.size());
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    links_.push_back({vertex_name(from) + "->" + vertex_name(to), type, from, to, bandwidth, latency});
    out_.at(static_cast<std::size_t>(from)).push_back(static_cast<int>(links_.size()) - 1);
  }
  routes_.clear();
  return id;
}

const std::vector<int>& Topology::route(int src, int dst) const {
  if (src < 0 || dst < 0 || src >= num_gpus() || dst >= num_gpus())
    throw std::invalid_argument("GPU id out of range in topology '" + name_ + "' (" +
                                std::to_string(num_gpus()) + " GPUs): " + std::to_string(src) + " -> " +
                                std::to_string(dst));
  const std::int64_t key = static_cast<std::int64_t>(src) * num_gpus() + dst;
  if (auto it = routes_.find(key); it != routes_.end()) return it->second;
  // Breadth-first search; out_ lists are in creation order, so ties resolve deterministically.
  // Paths never pass through another GPU (GPUs do not forward traffic).
  std::vector<int> via(out_.size(), -1);
  std::vector<bool> seen(out_.size(), false);
  std::deque<int> queue{src};
  seen[static_cast<std::size_t>(src)] = true;
  while (!queue.empty() && !seen[static_cast<std::size_t>(dst)]) {
    const int v = queue.front();
    queue.pop_front();
    if (v != src && v < num_gpus()) continue;
    for (int l : out_[static_cast<std::size_t>(v)]) {
      const int w = links_[static_cast<std::size_t>(l)].to;
      if (seen[static_cast<std::size_t>(w)]) continue;
      seen[static_cast<std::size_t>(w)] = true;
      via[static_cast<std::size_t>(w)] = l;
      queue.push_back(w);
    }
  }
  if (src != dst && !seen[static_cast<std::size_t>(dst)])
    throw std::invalid_argument("no path from gpu" + std::to_string(src) + " to gpu" + std::to_string(dst) +
                                " in topology '" + name_ + "'");
  std::vector<int> path;
  for (int v = dst; v != src;) {
    const int l = via[static_cast<std::size_t>(v)];
    path.push_back(l);
    v = links_[static_cast<std::size_t>(l)].from;
  }
  std::reverse(path.begin(), path.end());
  return routes_.emplace(key, std::move(path)).first->second;
}

double Topology::path_latency(int src, int dst) const {
  double s = 0;
  for (int l : route(src, dst)) s += links_[static_cast<std::size_t>(l)].latency;
  return s;
}

double Topology::path_bandwidth(int src, int dst) const {
  double bw = std::numeric_limits<double>::infinity();
  for (int l : route(src, dst)) bw = std::min(bw, links_[static_cast<std::size_t>(l)].bandwidth);
  return bw;
}

}  // namespace ks::interconnect
