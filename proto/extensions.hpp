#pragma once
// Payload extensions of the GPU protocol. The payload owns its extensions (the payload's
// destructor deletes them): never attach a stack object. On hot paths take payloads from a
// PayloadPool, which keeps one extension of each kind attached for reuse (a reused extension's
// vectors keep their capacity, so refilling them allocates nothing). Extensions are values: no
// pointer into the initiator's or any other module's state; what a target reports goes back in
// the extension's response fields.
#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>

#include "kernels/kernel.hpp"
#include "kernels/kernel_cost.hpp"
#include "kernels/step_kernels.hpp"
#include "proto/collective_types.hpp"

namespace ks::proto {

template <class T>
struct Extension : tlm::tlm_extension<T> {
  tlm::tlm_extension_base* clone() const override { return new T(static_cast<const T&>(*this)); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    static_cast<T&>(*this) = static_cast<const T&>(other);
  }
};

// Launch one kernel (or `repeat` identical kernels back to back, e.g. one per layer) on a stream.
// The launch is asynchronous: b_transport returns once the launch is accepted; completion is
// observed with a Synchronize (or, for a stream-level model, the returned `finish` time).
struct KernelLaunch : Extension<KernelLaunch> {
  // request
  kernels::Kernel kernel{};
  int stream = 0;
  int repeat = 1;
  int layer = -1;                   // -1: not a transformer layer (embedding, lm_head, ...)
  std::uint64_t step = 0;           // engine step id
  std::vector<std::uint64_t> request_ids;  // requests in the batch
  // Collectives only: true lets later compute kernels run while the collective is in flight
  // (nothing consumes its result before the next Synchronize); false (the default) makes the
  // compute stream wait for it, as a TP all-reduce feeding the next layer requires.
  bool overlap = false;
  // response (filled by the GPU)
  sc_core::sc_time start;           // absolute start time of the first repeat
  sc_core::sc_time finish;          // absolute completion time of the last repeat
  kernels::KernelCost cost{};       // cost of one repeat
};

// How long one collective of a step takes on its group's links (exclusive to the group).
struct CollectiveTime {
  kernels::OpKind op = kernels::OpKind::AllReduce;
  double bytes = 0;
  sc_core::sc_time duration;
};

// A group's collective counters.
// Times in integer picoseconds: sums are exact, so n repeats of a layer add n times its total.
struct CollectiveTally {
  std::uint64_t count = 0;
  sc_core::sc_time busy;     // summed durations
  sc_core::sc_time exposed;  // compute held back by them
};

// One rank's step, as another identical rank can reuse it.
struct StepReplay {
  sc_core::sc_time issue, compute_before, comm_before, compute_after, comm_after;
  std::vector<sc_core::sc_time> durations;  // of the pre, one layer's and the post kernels, in order
};

// Launch a whole engine step (pre kernels, `num_layers` identical layers, post kernels) in one
// transaction: the step-granularity fidelity setting of the host. Kernel i of the step counts as
// issued at issue + (i + 1) * launch_overhead, exactly as one KernelLaunch per kernel from a host
// paying launch_overhead before each; the GPU returns the same stream timing and per-kernel
// statistics. A target that cannot price a step as a whole (a TP group, whose collectives cross
// the fabric) answers TLM_COMMAND_ERROR_RESPONSE and the host falls back to kernel launches.
struct StepLaunch : Extension<StepLaunch> {
  // request
  kernels::StepKernels kernels;
  sc_core::sc_time launch_overhead;
  int stream = 0;
  std::uint64_t step = 0;
  std::vector<std::uint64_t> request_ids;  // requests in the batch
  // Set by a TP group for its ranks (see hw/gpu/tp_group.hpp): the step's collective kernels
  // are not run by the GPU but waited for, exactly as when the group sends them over the fabric
  // one by one. A collective starts when the compute stream has produced its input and
  // `comm_stream` is free, lasts its `collective_times` entry (by kind and size), and the
  // compute stream waits for it. Empty: a GPU rejects a step containing collectives
  // (TLM_COMMAND_ERROR_RESPONSE).
  std::vector<CollectiveTime> collective_times;
  int comm_stream = 1;
  // The rank that counts the group's collectives (count_collectives) adds each one to `tally`
  // in launch order, as one launch at a time would; the group reads the totals back.
  bool count_collectives = false;
  CollectiveTally tally;
  // Ranks of a TP group run the same shard: the first records its stream times in `replay`
  // (Record); the others (Reuse) take its result directly when their own kernel durations and
  // starting stream times are the same (else they run the step themselves).
  enum class Replay { None, Record, Reuse } replay_role = Replay::None;
  StepReplay replay;
  // response
  sc_core::sc_time finish;  // completion of the step's last kernel
};

// Wait until every kernel issued to a stream (or all streams: stream = -1) has finished.
struct Synchronize : Extension<Synchronize> {
  int stream = -1;
};

// A collective over the fabric (interconnect target socket). Asynchronous like a kernel launch:
// it starts at the issue time (sc_time_stamp() + delay) and the fabric fills start/finish.
struct Collective : Extension<Collective> {
  CollectiveKind kind = CollectiveKind::AllReduce;
  double bytes = 0;                // message size per rank (nccl-tests "size")
  std::vector<int> group;          // global GPU ids taking part, in ring order
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
  int step = 0;                    // step within the algorithm (ring: 2(n-1) steps); informational
  int stream = 1;                  // the communication stream
  std::uint64_t engine_step = 0;   // the engine step it serves (traces show detailed steps only)
  // A probe reserves nothing: the fabric answers how long the collective takes on idle links
  // and whether the group's links are exclusive to it (no other declared traffic crosses them).
  bool probe = false;
  // response (filled by the fabric)
  sc_core::sc_time start;
  sc_core::sc_time finish;
  sc_core::sc_time idle_duration;  // probes only
  bool exclusive = false;          // probes only
};

// A copy between memories: device ids >= 0 are GPUs, -1 is host memory. Sent to the fabric, it
// crosses the links of the route between the GPUs; the fabric fills finish.
struct MemCopy : Extension<MemCopy> {
  int src = -1;
  int dst = 0;
  double bytes = 0;
  std::uint64_t engine_step = 0;  // the engine step it serves (traces show detailed steps only)
  sc_core::sc_time finish;  // response
};

// cudaStreamWaitEvent: work issued to `stream` after this does not start before `until`.
struct StreamWait : Extension<StreamWait> {
  int stream = 0;
  sc_core::sc_time until;
};

}  // namespace ks::proto
