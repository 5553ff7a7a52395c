#pragma once
// Runs transfers and collectives on a topology's links. A transfer reserves every link of its
// route at once (cut-through, as NVLink/PCIe/IB forward packets, not whole messages): it starts
// when it is ready and all its links are free, holds them for bytes / bottleneck bandwidth, and
// arrives after that plus the sum of the links' latencies. Pure C++: the SystemC fabric module,
// the `collective` command and the validation share it.
#include <memory>
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

  // A point-to-point transfer ready at `ready` (s).
  TransferTiming transfer(int src, int dst, double bytes, double ready);
  // A collective issued at `issue` (s): the topology's collective overhead, then the steps of
  // collective_schedule(). Returns when the first step starts and the last transfer arrives.
  TransferTiming collective(CollectiveKind kind, CollectiveAlgorithm algorithm, const std::vector<int>& group,
                            double bytes, double issue);

 private:
  std::shared_ptr<const Topology> topology_;
  std::vector<LinkTimeline> links_;
};

// Predicted time of one collective on an otherwise idle fabric (what `kernelsight collective`
// prints).
double idle_collective_time(const Topology& topology, CollectiveKind kind, CollectiveAlgorithm algorithm,
                            const std::vector<int>& group, double bytes);

}  // namespace ks::interconnect
