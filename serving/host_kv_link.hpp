#pragma once
// The link between a GPU and host memory that the host KV tier's copies cross (PCIe, or C2C on
// a Grace Hopper/Blackwell superchip): one sim::Resource per direction, so copies in one
// direction queue FIFO on it (each takes latency + bytes / bandwidth) while the two directions
// run at once (PCIe and C2C are full duplex). Every tensor-parallel rank copies its own shard of
// a block over its own link at the same time as the others, so one link carrying a rank's shard
// stands for all of them.
#include <cstdint>

#include "sc_modules/sim/sim.hpp"

namespace ks::serving {

struct HostKvLinkStats {
  std::int64_t loads = 0, stores = 0;
  double load_bytes = 0, store_bytes = 0;      // per rank
  double load_seconds = 0, store_seconds = 0;  // time the copies occupied their lane
};

class HostKvLink {
 public:
  // bandwidth in bytes/s per direction (> 0), latency in seconds per copy (>= 0); else
  // std::invalid_argument.
  HostKvLink(sim::Environment& env, double bandwidth, double latency_s);

  double copy_seconds(double bytes) const { return latency_s_ + bytes / bandwidth_; }
  // Host -> GPU: the calling process waits for the lane (behind earlier loads) and for the copy.
  void load(double bytes);
  // GPU -> host in the background: a process queues the copy on the other lane; the caller goes on.
  void store(double bytes);

  double bandwidth() const { return bandwidth_; }
  double latency_s() const { return latency_s_; }
  const HostKvLinkStats& stats() const { return stats_; }

 private:
  sim::Environment& env_;
  double bandwidth_, latency_s_;
  sim::Resource h2d_, d2h_;
  HostKvLinkStats stats_;
};

}  // namespace ks::serving
