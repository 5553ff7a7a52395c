#pragma once
// One serving engine instance: an environment process that forms a batch with its scheduler,
// turns it into kernels and runs them through its host CPU module, step after step. It holds no
// per-request thread; requests arrive through an inbox store.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/host/host_cpu.hpp"
#include "kernels/dtype.hpp"
#include "kernels/model_config.hpp"
#include "kernels/step.hpp"
#include "kernels/step_decomposer.hpp"
#include "sc_modules/sim/sim.hpp"
#include "sc_modules/util/trace_recorder.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/kv_cache.hpp"
#include "serving/metrics_recorder.hpp"

namespace ks::serving {

struct ReplicaSpec {
  std::string name;
  kernels::ModelConfig model;
  kernels::DType weight_dtype = kernels::DType::BF16;
  kernels::DType kv_dtype = kernels::DType::BF16;
  kernels::ParallelConfig parallel;
};

struct ReplicaStats {
  std::uint64_t steps = 0;
  std::uint64_t kernels = 0;
  std::uint64_t preemptions = 0;
  double busy_s = 0;
  double host_s = 0;     // prepare + finish overheads
  double gpu_wait_s = 0; // host waiting for the GPU
};

class Replica {
 public:
  Replica(sim::Environment& env, ReplicaSpec spec, hw::HostCpu& host, std::unique_ptr<KvBlockManager> kv,
          std::unique_ptr<BatchScheduler> scheduler, MetricsRecorder& metrics);

  void submit(Request* request);
  std::size_t outstanding() const { return outstanding_; }
  const ReplicaStats& stats() const { return stats_; }
  const KvBlockManager& kv() const { return *kv_; }
  // Called for every request that finishes (e.g. a closed-loop source sends the next one).
  void set_on_finish(std::function<void(Request&)> callback) { on_finish_ = std::move(callback); }
  // Records queue and KV-cache counters after each step and each finished request's
  // queued / prefill / decode spans on `track` (nullptr: no tracing, the default).
  void set_trace(util::TraceRecorder* trace, int track) {
    trace_ = trace;
    trace_track_ = track;
  }

 private:
  void engine_loop();
  kernels::StepBatch to_batch(const StepPlan& plan);

  sim::Environment& env_;
  ReplicaSpec spec_;
  hw::HostCpu& host_;
  std::unique_ptr<KvBlockManager> kv_;
  std::unique_ptr<BatchScheduler> scheduler_;
  MetricsRecorder& metrics_;
  sim::Store<Request*> inbox_;
  std::size_t outstanding_ = 0;
  ReplicaStats stats_;
  std::vector<std::uint64_t> batch_ids_;
  kernels::StepKernels kernels_;  // refilled every step
  std::function<void(Request&)> on_finish_;
  util::TraceRecorder* trace_ = nullptr;
  int trace_track_ = -1;

  void trace_step(const StepOutcome& outcome);
};

}  // namespace ks::serving
