#pragma once
// The hand-over between two pipeline stages of a replica: each TP rank of the sending stage
// sends its slice of the activations to the same rank of the receiving stage (vLLM's
// send_tensor_dict with all_gather_group). Every send is a `MemCopy` on the fabric, so it
// crosses the links of the topology's route and queues behind (and delays) whatever else holds
// them: TP collectives, other stages' sends, other replicas' traffic. Asynchronous for the
// sender like a kernel launch; the receiver waits for the returned arrival time.
#include <cstdint>
#include <map>
#include <vector>

#include <systemc>

#include "kernels/kernel.hpp"
#include "proto/engine.hpp"
#include "proto/payload_pool.hpp"
#include "proto/protocol.hpp"
#include "base/util/trace_recorder.hpp"

namespace ks::hw {

// Send/recv work of one phase, for kernels.csv and summary.json.
struct TransferStats {
  std::uint64_t transfers = 0;  // rank-to-rank sends
  double seconds = 0;           // summed from issue to arrival
  double bytes = 0;
};

class PipelineLink : public sc_core::sc_module, public proto::ActivationChannel {
 public:
  proto::GpuInitiatorSocket<PipelineLink> fabric_socket;  // bind to FabricModule::socket

  // src[r] sends to dst[r]: global GPU ids of the two stages' TP ranks, in rank order.
  PipelineLink(const sc_core::sc_module_name& name, std::vector<int> src, std::vector<int> dst);

  // Sends `bytes_per_rank` from every rank at the current time; returns when the last byte of
  // the slowest rank pair has arrived (absolute).
  sc_core::sc_time send(double bytes_per_rank, kernels::Phase phase, std::uint64_t step) override;

  const std::vector<int>& src() const { return src_; }
  const std::vector<int>& dst() const { return dst_; }
  const std::map<kernels::Phase, TransferStats>& stats() const { return stats_; }
  // Records each rank's send on `track` (nullptr: no tracing, the default).
  void set_trace(util::TraceRecorder* trace, int track) {
    trace_ = trace;
    trace_track_ = track;
  }

 private:
  std::vector<int> src_, dst_;
  proto::PayloadPool pool_;
  std::map<kernels::Phase, TransferStats> stats_;
  util::TraceRecorder* trace_ = nullptr;
  int trace_track_ = -1;
};

}  // namespace ks::hw
