#pragma once
// The engine-facing side of the contract: the sc_interfaces a serving engine process calls, so
// serving/ depends on these and not on hw/ modules. hw::HostCpu implements StepExecutor,
// hw::PipelineLink implements ActivationChannel; a user's modules may implement them instead.
#include <cstdint>
#include <vector>

#include <systemc>

#include "kernels/kernel.hpp"
#include "kernels/step_kernels.hpp"
#include "proto/step_shape.hpp"

namespace ks::proto {

// Where the time of one step went.
struct StepTiming {
  sc_core::sc_time total;        // from step start until outputs are processed
  sc_core::sc_time host_before;  // scheduling + input preparation
  sc_core::sc_time launch;       // host time spent launching kernels
  sc_core::sc_time gpu_wait;     // host idle, waiting for the GPU after the last launch
  sc_core::sc_time host_after;   // sampling + output processing
  std::uint64_t kernels = 0;
  bool cuda_graph = false;       // launched as one CUDA graph
};

// The engine's software overheads of a step, in seconds of host CPU time: the engine computes
// them (serving/host_overheads.hpp) and the executor spends them before its first launch and
// after the GPU finishes. A pipeline stage's worker prepares only on the first stage and samples
// and processes outputs only on the last (serving/replica.hpp); zero means the phase is skipped.
struct HostPhases {
  double prepare_s = 0;  // scheduling + input preparation before the launches
  double finish_s = 0;   // sampling + output processing after the GPU
};

// Runs engine steps on hardware: blocks the calling environment process for the step's duration.
class StepExecutor : public virtual sc_core::sc_interface {
 public:
  virtual StepTiming execute_step(const kernels::StepKernels& step, const StepShape& shape, std::uint64_t step_id,
                                  const std::vector<std::uint64_t>* request_ids = nullptr,
                                  HostPhases phases = {}) = 0;
};

// Carries a pipeline stage's activations to the next stage.
class ActivationChannel : public virtual sc_core::sc_interface {
 public:
  // Sends `bytes_per_rank` from every rank at the current time; returns when the last byte of
  // the slowest rank pair has arrived (absolute).
  virtual sc_core::sc_time send(double bytes_per_rank, kernels::Phase phase, std::uint64_t step) = 0;
};

}  // namespace ks::proto
