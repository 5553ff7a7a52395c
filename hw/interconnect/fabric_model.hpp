#pragma once
// Runs transfers and collectives on a topology's links. A transfer reserves every link of its
// route at once (cut-through, as NVLink/PCIe/IB forward packets, not whole messages): it starts
// when it is ready and all its links are free, holds them for bytes / bottleneck bandwidth, and
// arrives after that plus the sum of the links' latencies. Pure C++: the SystemC fabric module,
// the `collective` command and the validation share it.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "hw/interconnect/collective_schedule.hpp"
#include "hw/interconnect/link_timeline.hpp"
#include "hw/interconnect/topology.hpp"

namespace ks::interconnect {

struct TransferTiming {
  double start;   // s
  double finish;  // s (arrival of the last byte)
};

class FabricModel {
 public:
  explicit FabricModel(std::shared_ptr<const Topology> topology);

  const Topology& topology() const { return *topology_; }
  const std::vector<LinkTimeline>& links() const { return links_; }

  // Called for every link a transfer holds (link id, start and end of the hold in s, bytes): a
  // timeline per link for traces. None by default.
  using LinkObserver = std::function<void(int link, double start, double end, double bytes)>;
  void set_link_observer(LinkObserver observer) { observer_ = std::move(observer); }

  // No transfer will be ready before `t` (s): reservations that ended by then are dropped
  // (the SystemC fabric passes the current time; a link otherwise keeps every reservation).
  void set_horizon(double t) { horizon_ = t; }
  // A point-to-point transfer ready at `ready` (s).
  TransferTiming transfer(int src, int dst, double bytes, double ready);
  // A collective issued at `issue` (s): the topology's collective overhead, the local copy and the
  // fixed latency of the plan collective_plan() picks (NCCL's algorithm x protocol choice), then
  // the steps of collective_schedule() for that plan's schedule (NVLS: the ring's), the plan's
  // extra latency and bandwidth factor applying to every transfer. Returns when the first step
  // starts and the last transfer arrives. On an idle uniform fabric this equals plan_time().
  TransferTiming collective(CollectiveKind kind, CollectiveAlgorithm algorithm, const std::vector<int>& group,
                            double bytes, double issue);

  // Exclusive links. Every set of GPUs that will talk over the fabric (a TP group, a pipeline
  // stage pair) is declared before the run; a declared group whose links (the routes between
  // its members) no other declared group crosses owns them. Its collectives then never wait for
  // anyone else's, so their duration is a pure function of kind and size: what lets a TP group
  // price a whole step without sending each collective (hw/gpu/tp_group.hpp).
  void declare_group(const std::vector<int>& gpus);
  bool exclusive(const std::vector<int>& gpus) const;
  // Marks the group's links as used outside the fabric's timelines (a fast-path group); traffic
  // of an undeclared group over them is then an error, since it would not see that use.
  void claim_exclusive(const std::vector<int>& gpus);
  // Throws std::runtime_error if undeclared traffic between `gpus` crosses claimed links.
  void check_undeclared(const std::vector<int>& gpus);
  // idle_collective_time() on this fabric's topology, without copying it.
  double idle_collective_time(CollectiveKind kind, CollectiveAlgorithm algorithm, const std::vector<int>& group,
                              double bytes) const;

 private:
  TransferTiming transfer(int src, int dst, double bytes, double ready, const ProtocolEffect& effect);
  std::set<int> links_between(const std::vector<int>& gpus) const;

  std::shared_ptr<const Topology> topology_;
  std::vector<LinkTimeline> links_;
  LinkObserver observer_;
  double horizon_ = 0;
  std::vector<std::set<int>> declared_;  // sorted member sets
  std::vector<char> claimed_;            // per link
  bool any_claimed_ = false;
  std::set<std::set<int>> checked_;      // undeclared groups already found clear
  // exclusive() and claim_exclusive() answers so far (a TP group asks at every probe).
  mutable std::map<std::set<int>, bool> exclusive_known_;
  std::set<std::set<int>> claimed_groups_;
};

// The kind of hop a route is for NCCL's latency table: Network if it crosses InfiniBand, else
// PCIe if it crosses PCIe, else NVLink.
HopKind route_hop_kind(const Topology& topology, int src, int dst);

// The plan (algorithm x protocol) a collective runs with: NCCL's choice by its cost model
// (choose_plan), with the slowest route of the schedule (largest latency, smallest bandwidth, the
// worst hop kind: what bounds a ring mixing NVLink and PCIe or InfiniBand) and the topology's
// protocol costs.
CollectivePlan collective_plan(const Topology& topology, CollectiveKind kind, CollectiveAlgorithm algorithm,
                               const std::vector<int>& group, double bytes);

// Predicted time of one collective on an otherwise idle fabric (what `kernelsight collective`
// prints).
double idle_collective_time(const Topology& topology, CollectiveKind kind, CollectiveAlgorithm algorithm,
                            const std::vector<int>& group, double bytes);

}  // namespace ks::interconnect
