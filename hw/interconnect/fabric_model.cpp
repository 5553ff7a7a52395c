#include "hw/interconnect/fabric_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace ks::interconnect {

HopKind route_hop_kind(const Topology& topology, int src, int dst) {
  HopKind hop = HopKind::NVLink;
  for (int l : topology.route(src, dst)) {
    const LinkType type = topology.links()[static_cast<std::size_t>(l)].type;
    if (type == LinkType::InfiniBand) return HopKind::Network;
    if (type == LinkType::PCIe) hop = HopKind::PCIe;
  }
  return hop;
}

namespace {

CollectivePlan plan_for(const Topology& topology, CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks,
                        double bytes, const std::vector<CollectiveStep>& steps) {
  double alpha = 0, beta = std::numeric_limits<double>::infinity();
  HopKind hop = HopKind::NVLink;
  // Ring steps repeat the same neighbour pairs: the first step has every route.
  const bool same_pairs = kind != CollectiveKind::AllToAll &&
                          resolve_algorithm(kind, algorithm, ranks, bytes) != CollectiveAlgorithm::Tree;
  for (std::size_t s = 0; s < (same_pairs ? std::min<std::size_t>(1, steps.size()) : steps.size()); ++s)
    for (const Transfer& t : steps[s]) {
      if (t.src == t.dst) continue;
      alpha = std::max(alpha, topology.path_latency(t.src, t.dst));
      beta = std::min(beta, topology.path_bandwidth(t.src, t.dst));
      hop = std::max(hop, route_hop_kind(topology, t.src, t.dst));
    }
  if (!std::isfinite(beta)) return CollectivePlan{};
  return choose_plan(kind, algorithm, ranks, bytes, alpha, beta, hop, topology.protocol_costs());
}

}  // namespace

FabricModel::FabricModel(std::shared_ptr<const Topology> topology)
    : topology_(std::move(topology)), links_(topology_->links().size()) {}

TransferTiming FabricModel::transfer(int src, int dst, double bytes, double ready) {
  return transfer(src, dst, bytes, ready, {0.0, 1.0});
}

TransferTiming FabricModel::transfer(int src, int dst, double bytes, double ready, const ProtocolEffect& effect) {
  if (src == dst) return {ready, ready};  // a local copy is not the fabric's business
  const std::vector<int>& path = topology_->route(src, dst);
  const double hold = bytes / (topology_->path_bandwidth(src, dst) * effect.bandwidth_factor);
  // Cut-through: the earliest interval free on every link of the route at once.
  double start = ready;
  for (bool moved = true; moved;) {
    moved = false;
    for (int l : path) {
      LinkTimeline& link = links_[static_cast<std::size_t>(l)];
      link.forget_before(horizon_);
      const double t = link.earliest_fit(start, hold);
      if (t > start) {
        start = t;
        moved = true;
      }
    }
  }
  for (int l : path) links_[static_cast<std::size_t>(l)].occupy(start, hold, bytes);
  if (observer_)
    for (int l : path) observer_(l, start, start + hold, bytes);
  return {start, start + hold + topology_->path_latency(src, dst) + effect.extra_latency};
}

TransferTiming FabricModel::collective(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                       const std::vector<int>& group, double bytes, double issue) {
  auto steps = collective_schedule(kind, algorithm, group, bytes);
  const CollectivePlan plan = plan_for(*topology_, kind, algorithm, static_cast<int>(group.size()), bytes, steps);
  const ProtocolEffect effect = plan.effect;
  // Every rank copies its own chunk before its first send (the kernel's local pass); NCCL's fixed
  // latency of the plan comes once, before the first step. The engine's custom all-reduce has its
  // own transfers and latency, no NCCL overhead or local pass.
  if (plan.custom) steps = custom_allreduce_schedule(group, bytes, plan.one_shot);
  const double begin =
      issue + plan.fixed_latency +
      (plan.custom ? 0.0
                   : topology_->collective_overhead() + local_copy_time(kind, algorithm, static_cast<int>(group.size()),
                                                                        bytes, topology_->protocol_costs()));
  // ready[g]: when rank g holds everything it received so far (may send its next chunk).
  std::map<int, double> ready;
  for (int g : group) ready[g] = begin;
  double first_start = -1, last = begin;
  for (const CollectiveStep& step : steps) {
    std::map<int, double> next = ready;
    for (const Transfer& t : step) {
      const TransferTiming tt = transfer(t.src, t.dst, t.bytes, ready[t.src], effect);
      if (first_start < 0) first_start = tt.start;
      next[t.dst] = std::max(next[t.dst], tt.finish);
      last = std::max(last, tt.finish);
    }
    ready = std::move(next);
  }
  return {first_start < 0 ? begin : first_start, last};
}

std::set<int> FabricModel::links_between(const std::vector<int>& gpus) const {
  std::set<int> links;
  for (int a : gpus)
    for (int b : gpus)
      if (a != b)
        for (int l : topology_->route(a, b)) links.insert(l);
  return links;
}

void FabricModel::declare_group(const std::vector<int>& gpus) {
  const std::set<int> members(gpus.begin(), gpus.end());
  if (std::find(declared_.begin(), declared_.end(), members) == declared_.end()) declared_.push_back(members);
  exclusive_known_.clear();
}

bool FabricModel::exclusive(const std::vector<int>& gpus) const {
  const std::set<int> members(gpus.begin(), gpus.end());
  if (auto it = exclusive_known_.find(members); it != exclusive_known_.end()) return it->second;
  bool own = std::find(declared_.begin(), declared_.end(), members) != declared_.end();
  if (own) {
    const std::set<int> mine = links_between(gpus);
    for (const std::set<int>& other : declared_) {
      if (other == members) continue;
      for (int l : links_between(std::vector<int>(other.begin(), other.end())))
        if (mine.count(l) != 0) own = false;
    }
  }
  exclusive_known_.emplace(members, own);
  return own;
}

void FabricModel::claim_exclusive(const std::vector<int>& gpus) {
  if (!claimed_groups_.emplace(gpus.begin(), gpus.end()).second) return;  // claimed before
  claimed_.resize(links_.size(), 0);
  for (int l : links_between(gpus)) claimed_[static_cast<std::size_t>(l)] = 1;
  any_claimed_ = true;
}

void FabricModel::check_undeclared(const std::vector<int>& gpus) {
  if (!any_claimed_) return;
  const std::set<int> members(gpus.begin(), gpus.end());
  if (std::find(declared_.begin(), declared_.end(), members) != declared_.end() || checked_.count(members) != 0)
    return;
  for (int l : links_between(gpus)) {
    if (claimed_[static_cast<std::size_t>(l)] == 0) continue;
    std::string ids;
    for (int g : members) ids += (ids.empty() ? "" : ",") + std::to_string(g);
    throw std::runtime_error("traffic between GPUs {" + ids + "} crosses link '" +
                             topology_->links()[static_cast<std::size_t>(l)].name + "', which a TP group prices without the fabric's timelines; declare the group "
                             "(FabricModule::declare_group) before the run, or set "
                             "hardware.host.launch_granularity=kernel");
  }
  checked_.insert(members);
}

CollectivePlan collective_plan(const Topology& topology, CollectiveKind kind, CollectiveAlgorithm algorithm,
                               const std::vector<int>& group, double bytes) {
  return plan_for(topology, kind, algorithm, static_cast<int>(group.size()), bytes,
                      collective_schedule(kind, algorithm, group, bytes));
}

double idle_collective_time(const Topology& topology, CollectiveKind kind, CollectiveAlgorithm algorithm,
                            const std::vector<int>& group, double bytes) {
  // A private copy of the topology keeps the caller's object untouched (routes are cached).
  return FabricModel(std::make_shared<Topology>(topology)).idle_collective_time(kind, algorithm, group, bytes);
}

double FabricModel::idle_collective_time(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                         const std::vector<int>& group, double bytes) const {
  FabricModel idle(topology_);  // the same routes, no reservations
  return idle.collective(kind, algorithm, group, bytes, 0.0).finish;
}

}  // namespace ks::interconnect
