#pragma once
// The serving process's CPU. It spends the engine's preparation time (scheduling, input
// preparation: seconds the engine computes, proto::HostPhases), launches the step's kernels one TLM
// transaction each on the GPU socket, waits for the GPU, and spends the engine's finishing time
// (sampling, output processing). Launches are asynchronous: the host pays `launch_overhead` per
// kernel (or one graph launch for a CUDA-graphed decode step) while the GPU works through its
// stream, so small batches become host-bound the way real engines do and large ones GPU-bound.
// What is hardware stays here (launch costs, CUDA graphs: LaunchPolicy); the engine's software
// overheads live in serving/host_overheads.hpp.
//
// Transaction granularity (`launch_granularity`, a fidelity setting): `kernel` sends one TLM
// transaction per kernel (~400 per step); `step` sends the whole step as one StepLaunch, which the
// GPU prices per kernel with the same stream timing and statistics (docs/performance.md). Targets
// that cannot take a step (TP groups) get kernel launches either way.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "hw/host/launch_policy.hpp"
#include "hw/host/step_shape.hpp"
#include "kernels/step_decomposer.hpp"
#include "proto/engine.hpp"
#include "base/config/schema.hpp"
#include "sc_modules/sim/environment.hpp"
#include "proto/payload_pool.hpp"
#include "proto/protocol.hpp"
#include "base/util/trace_recorder.hpp"

namespace ks::hw {

using proto::HostPhases;
using proto::StepTiming;

class HostCpu : public sc_core::sc_module, public proto::StepExecutor {
 public:
  proto::GpuInitiatorSocket<HostCpu> gpu_socket;

  HostCpu(const sc_core::sc_module_name& name, LaunchPolicy launch);

  // Runs one engine step: blocks the calling environment process for the step's duration.
  StepTiming execute_step(const kernels::StepKernels& step, const StepShape& shape, std::uint64_t step_id,
                          const std::vector<std::uint64_t>* request_ids = nullptr, HostPhases phases = {}) override;

  std::uint64_t steps() const { return steps_; }
  // Steps sent as one StepLaunch transaction (the rest went kernel by kernel).
  std::uint64_t whole_step_launches() const { return whole_steps_; }
  // Records each step (and, in detailed steps, its prepare/launch/wait/finish phases) on `track`.
  void set_trace(util::TraceRecorder* trace, int track) {
    trace_ = trace;
    trace_track_ = track;
  }
  bool step_granularity() const { return step_granularity_; }

 private:
  // Sends the step as one StepLaunch; false if the target does not take steps.
  bool launch_step(const kernels::StepKernels& step, std::uint64_t step_id,
                   const std::vector<std::uint64_t>* request_ids, const sc_core::sc_time& per_kernel,
                   sc_core::sc_time& local);
  void launch(const kernels::Kernel& kernel, int layer, std::uint64_t step_id,
              const std::vector<std::uint64_t>* request_ids, const sc_core::sc_time& per_kernel,
              sc_core::sc_time& local);

  LaunchPolicy launch_policy_;
  sc_core::sc_time launch_overhead_;
  sc_core::sc_time graph_launch_overhead_;
  bool step_granularity_ = true;  // cleared for good once the target rejects a StepLaunch
  proto::PayloadPool launch_pool_;
  proto::PayloadPool sync_pool_;
  proto::PayloadPool step_pool_;  // own pool: a payload carries one kind of request extension
  std::uint64_t steps_ = 0;
  std::uint64_t whole_steps_ = 0;
  util::TraceRecorder* trace_ = nullptr;
  int trace_track_ = -1;

  void trace_step(const StepTiming& timing, std::uint64_t step_id, const sc_core::sc_time& step_start) const;
};

}  // namespace ks::hw
