#include "hw/interconnect/fabric_model.hpp"

#include <algorithm>
#include <map>

namespace ks::interconnect {

FabricModel::FabricModel(std::shared_ptr<const Topology> topology)
    : topology_(std::move(topology)), links_(topology_->links().size()) {}

TransferTiming FabricModel::transfer(int src, int dst, double bytes, double ready) {
  if (src == dst) return {ready, ready};  // a local copy is not the fabric's business
  const std::vector<int>& path = topology_->route(src, dst);
  double start = ready;
  for (int l : path) start = std::max(start, links_[static_cast<std::size_t>(l)].free_at());
  const double hold = bytes / topology_->path_bandwidth(src, dst);
  for (int l : path) links_[static_cast<std::size_t>(l)].occupy(start, hold, bytes);
  return {start, start + hold + topology_->path_latency(src, dst)};
}

TransferTiming FabricModel::collective(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                       const std::vector<int>& group, double bytes, double issue) {
  const auto steps = collective_schedule(kind, algorithm, group, bytes);
  const double begin = issue + topology_->collective_overhead();
  // ready[g]: when rank g holds everything it received so far (may send its next chunk).
  std::map<int, double> ready;
  for (int g : group) ready[g] = begin;
  double first_start = -1, last = begin;
  for (const CollectiveStep& step : steps) {
    std::map<int, double> next = ready;
    for (const Transfer& t : step) {
      const TransferTiming tt = transfer(t.src, t.dst, t.bytes, ready[t.src]);
      if (first_start < 0) first_start = tt.start;
      next[t.dst] = std::max(next[t.dst], tt.finish);
      last = std::max(last, tt.finish);
    }
    ready = std::move(next);
  }
  return {first_start < 0 ? begin : first_start, last};
}

double idle_collective_time(const Topology& topology, CollectiveKind kind, CollectiveAlgorithm algorithm,
                            const std::vector<int>& group, double bytes) {
  // A private copy of the topology keeps the caller's object untouched (routes are cached).
  FabricModel fabric(std::make_shared<Topology>(topology));
  return fabric.collective(kind, algorithm, group, bytes, 0.0).finish;
}

}  // namespace ks::interconnect
