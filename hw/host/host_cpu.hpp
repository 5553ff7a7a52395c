#pragma once
// The serving process's CPU. It prepares each engine step (scheduling, input preparation), launches
// the step's kernels one TLM transaction each on the GPU socket, waits for the GPU, and finishes the
// step (sampling, output processing). Launches are asynchronous: the host pays `launch_overhead`
// per kernel while the GPU works through its stream, so small batches become launch-bound the way
// real engines do and large ones GPU-bound.
//
// Transaction granularity (`launch_granularity`, a fidelity setting): `kernel` sends one TLM
// transaction per kernel (~400 per step); `step` sends the whole step as one StepLaunch, which the
// GPU prices per kernel with the same stream timing and statistics (docs/performance.md). Targets
// that cannot take a step (TP groups) get kernel launches either way.
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "kernels/step_decomposer.hpp"
#include "sc_modules/config/schema.hpp"
#include "sc_modules/registry/registry.hpp"
#include "sc_modules/sim/environment.hpp"
#include "sc_modules/tlm/payload_pool.hpp"
#include "sc_modules/tlm/protocol.hpp"

namespace ks::hw {

// Where the time of one step went.
struct StepTiming {
  sc_core::sc_time total;        // from step start until outputs are processed
  sc_core::sc_time host_before;  // scheduling + input preparation
  sc_core::sc_time launch;       // host time spent launching kernels
  sc_core::sc_time gpu_wait;     // host idle, waiting for the GPU after the last launch
  sc_core::sc_time host_after;   // sampling + output processing
  std::uint64_t kernels = 0;
};

class HostCpu : public sc_core::sc_module {
 public:
  proto::GpuInitiatorSocket<HostCpu> gpu_socket;

  HostCpu(const sc_core::sc_module_name& name, const config::Params& params);

  // Runs one engine step: blocks the calling environment process for the step's duration.
  StepTiming execute_step(const kernels::StepKernels& step, std::uint64_t step_id,
                          const std::vector<std::uint64_t>* request_ids = nullptr);

  std::uint64_t steps() const { return steps_; }
  bool step_granularity() const { return step_granularity_; }

 private:
  // Sends the step as one StepLaunch; false if the target does not take steps.
  bool launch_step(const kernels::StepKernels& step, std::uint64_t step_id,
                   const std::vector<std::uint64_t>* request_ids, sc_core::sc_time& local);
  void launch(const kernels::Kernel& kernel, int layer, std::uint64_t step_id,
              const std::vector<std::uint64_t>* request_ids, sc_core::sc_time& local);

  sc_core::sc_time prepare_overhead_;
  sc_core::sc_time finish_overhead_;
  sc_core::sc_time launch_overhead_;
  bool step_granularity_ = true;  // cleared for good once the target rejects a StepLaunch
  proto::PayloadPool launch_pool_;
  proto::PayloadPool sync_pool_;
  proto::PayloadPool step_pool_;  // own pool: a payload carries one kind of request extension
  std::uint64_t steps_ = 0;
};

using HostRegistry = registry::Registry<HostCpu, const std::string&, const config::Params&>;
inline HostRegistry& host_registry() { return HostRegistry::instance("host"); }

}  // namespace ks::hw
