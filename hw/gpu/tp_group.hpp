#pragma once
// A tensor-parallel group of GPUs behind one GPU socket, so a host launches a step exactly as it
// does on one GPU. Compute kernels go to every GPU's compute stream (each rank runs its shard;
// the shapes from kernels::decompose_step are already per rank). A collective kernel becomes a
// `Collective` transaction on the fabric, on the communication stream:
// * it starts when every rank's compute stream has produced its input (and the comm stream is
//   free), so a slow rank delays the whole group;
// * unless the launch says `overlap`, the compute streams then wait for it (StreamWait), because
//   the next kernel consumes the reduced tensor; with `overlap` compute runs on alongside it.
// A whole step (StepLaunch) is taken when the fabric says the group's links are exclusive to it:
// its collectives then never queue behind anyone else's, so each one's duration is a function
// of kind and size, timed once on idle links (a probe) and remembered. Every rank gets the step
// with those durations (values in the StepLaunch) and runs the same recurrence as the
// kernel-by-kernel path, without a transaction per kernel or per collective. Otherwise the group answers
// TLM_COMMAND_ERROR_RESPONSE and the host falls back to kernel launches.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include <systemc>

#include "hw/gpu/gpu_module.hpp"
#include "proto/payload_pool.hpp"
#include "proto/protocol.hpp"
#include "base/util/trace_recorder.hpp"
#include "sc_modules/sim/time.hpp"

namespace ks::hw {

class TpGroup : public sc_core::sc_module {
 public:
  static constexpr int kComputeStream = 0;
  static constexpr int kCommStream = 1;

  proto::GpuTargetSocket<TpGroup> socket;              // the host binds here
  proto::GpuInitiatorSocket<TpGroup> fabric_socket;    // bind to FabricModule::socket

  // Binds one initiator socket to each GPU's target socket.
  TpGroup(const sc_core::sc_module_name& name, const std::vector<GpuModule*>& gpus);

  int size() const { return static_cast<int>(ranks_.size()); }
  const std::vector<int>& device_ids() const { return device_ids_; }
  std::uint64_t collectives() const { return tally_.count; }
  double comm_seconds() const { return sim::to_seconds(tally_.busy); }                   // summed collective durations
  double exposed_comm_seconds() const { return sim::to_seconds(tally_.exposed); }  // compute streams held back by them
  // Records each collective on `track` (nullptr: no tracing, the default).
  void set_trace(util::TraceRecorder* trace, int track) {
    trace_ = trace;
    trace_track_ = track;
  }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  void launch_step(tlm::tlm_generic_payload& payload, proto::StepLaunch& step, const sc_core::sc_time& delay);
  bool links_exclusive();
  sc_core::sc_time duration(const kernels::Kernel& collective);
  void time_collectives(const kernels::StepKernels& step, std::vector<proto::CollectiveTime>& out);
  static void clear_group_fields(proto::StepLaunch& step);
  struct ProbeResult {
    bool ok, exclusive;
    sc_core::sc_time idle_duration;
  };
  ProbeResult probe(const kernels::Kernel& collective);
  void collective(proto::KernelLaunch& launch, const sc_core::sc_time& issue);
  sc_core::sc_time stream_ready(int stream);
  void wait_stream(int stream, const sc_core::sc_time& until);

  std::vector<std::unique_ptr<proto::GpuInitiatorSocket<TpGroup>>> ranks_;
  std::vector<int> device_ids_;
  proto::PayloadPool sync_pool_, wait_pool_, coll_pool_;
  util::TraceRecorder* trace_ = nullptr;
  int trace_track_ = -1;
  enum class StepPath { Unknown, Whole, KernelByKernel } step_path_ = StepPath::Unknown;
  std::map<std::pair<int, double>, sc_core::sc_time> durations_;  // (op, bytes) -> idle duration
  // Every collective of the group, sent one by one or in whole steps (counted there by rank 0).
  proto::CollectiveTally tally_;
};

}  // namespace ks::hw
