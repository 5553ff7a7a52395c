#pragma once
// The engine-facing side of a KV-cache transfer between replicas (prefill/decode
// disaggregation): serving/ asks for a request's KV shards to move from its prefill GPUs to its
// decode GPUs through this sc_interface; hw::KvTransferLink implements it with `MemCopy`
// transactions on the interconnect, so the copies cross the modelled links (NVLink/NVSwitch in a
// node, InfiniBand across nodes) and contend with every other transfer on them.
#include <cstdint>
#include <vector>

#include <systemc>

namespace ks::proto {

// One rank-to-rank copy: global GPU ids and the bytes of the request's KV that move.
struct KvShardCopy {
  int src = 0;
  int dst = 0;
  double bytes = 0;
};

// How a request's KV moves. The cache is laid out per layer, so each copy goes as `layers` pieces
// (one per layer, as vLLM's NIXL connector and SGLang's transfer engines register per-layer
// buffers): they queue on the links one after another and slip between other traffic instead of
// holding a link for the whole cache. Layer-wise streaming (window_s > 0): the prefill sent layer
// l's KV as soon as layer l was computed, over the `window_s` the prefill ran; only what that
// window could not hide goes on the links when the prefill ends (at least the last layer's piece).
// window_s = 0: the whole cache moves after the prefill.
struct KvStreaming {
  int layers = 1;
  double window_s = 0;
};

struct KvTransferResult {
  sc_core::sc_time arrival;    // absolute: when the last byte of the slowest copy has arrived
  double bytes = 0;            // the request's KV bytes over all copies
  double sent_bytes = 0;       // of which put on the links now (the rest was hidden by streaming)
};

class KvTransferChannel : public virtual sc_core::sc_interface {
 public:
  // Starts every copy at the current time (they run concurrently); returns at once with the
  // arrival time (loosely timed: the caller waits for it).
  virtual KvTransferResult transfer(const std::vector<KvShardCopy>& copies, const KvStreaming& streaming,
                                    std::uint64_t request_id) = 0;
};

}  // namespace ks::proto
