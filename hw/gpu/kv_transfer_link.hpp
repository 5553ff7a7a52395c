#pragma once
// KV-cache transfers between a prefill replica's GPUs and a decode replica's GPUs (prefill/decode
// disaggregation, serving/pd_coordinator.hpp). Every rank-to-rank shard copy is a `MemCopy` on the
// interconnect, so it crosses the links of the topology's route (NVLink through the NVSwitch in a
// node, the InfiniBand NICs and switch across nodes), waits while they carry other traffic (TP
// collectives, other requests' KV) and delays what comes after it: each link serialises.
//
// Each copy goes as one MemCopy per layer (KvStreaming::layers), so it slips between other traffic
// on the links rather than waiting for a gap as long as the whole cache.
//
// Layer-wise streaming (KvStreaming::window_s > 0): the prefill sends each layer's share of the KV
// as the layer finishes. Spread over the prefill's window W in L equal pieces of b/L on a path of
// bandwidth B, the last byte leaves max(b/(L·B), b/B − W·(L−1)/L) after the prefill ends (the last
// piece, or the backlog when the link is slower than the layers). That many bytes,
// max(b/L, b − B·W·(L−1)/L), go on the links when the prefill ends; the pieces hidden behind the
// prefill's compute are counted as streamed but do not occupy the links' timelines (not modelled:
// their contention with traffic during the prefill).
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "hw/interconnect/topology.hpp"
#include "proto/kv_transfer.hpp"
#include "proto/payload_pool.hpp"
#include "proto/protocol.hpp"
#include "base/util/trace_recorder.hpp"

namespace ks::hw {

struct KvTransferLinkStats {
  std::uint64_t transfers = 0;  // requests
  std::uint64_t copies = 0;     // rank-to-rank MemCopys
  double bytes = 0;             // KV bytes moved (streamed ones included)
  double sent_bytes = 0;        // put on the links after the prefill
};

class KvTransferLink : public sc_core::sc_module, public proto::KvTransferChannel {
 public:
  proto::GpuInitiatorSocket<KvTransferLink> fabric_socket;  // bind to the interconnect

  // `topology`: for the path bandwidth of layer-wise streaming's overlap (may be null: then
  // streaming hides nothing and the whole cache is sent).
  KvTransferLink(const sc_core::sc_module_name& name, std::shared_ptr<const interconnect::Topology> topology);

  proto::KvTransferResult transfer(const std::vector<proto::KvShardCopy>& copies, const proto::KvStreaming& streaming,
                                   std::uint64_t request_id) override;

  // Bytes of a `bytes` copy that go on a path of `bandwidth` B/s when the prefill ends under
  // `streaming` (all of them without streaming).
  static double exposed_bytes(double bytes, double bandwidth, const proto::KvStreaming& streaming);

  const KvTransferLinkStats& stats() const { return stats_; }
  // Records each copy on `track` (nullptr: no tracing, the default).
  void set_trace(util::TraceRecorder* trace, int track) {
    trace_ = trace;
    trace_track_ = track;
  }

 private:
  std::shared_ptr<const interconnect::Topology> topology_;
  proto::PayloadPool pool_;
  KvTransferLinkStats stats_;
  util::TraceRecorder* trace_ = nullptr;
  int trace_track_ = -1;
};

}  // namespace ks::hw
