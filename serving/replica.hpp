#pragma once
// One serving engine instance: an environment process that forms a batch with its scheduler,
// turns it into kernels and runs them through its host CPU module, step after step. It holds no
// per-request thread; requests arrive through an inbox store.
//
// One engine core for every pipeline depth, as vLLM v1's engine core with a batch queue: the
// engine keeps up to pp micro-batches in flight. While the queue has room it schedules the next
// batch (from requests in no in-flight batch) and hands it to stage 0; when the queue is full
// or nothing can be scheduled, it waits for the oldest batch to leave the last stage and
// applies its tokens. pp = 1 is the one-stage case: its stage runs inside the engine process,
// so the queue is full as soon as a batch is dispatched and the batch is out when it returns.
// With pp > 1 each stage is a process with its own host CPU module (a worker) on its own GPU or
// TP group: it takes batches in order, runs its layers, and sends the activations to the next
// stage over an ActivationChannel (hw::PipelineLink on the fabric). Stage 0 prepares the batch,
// the last stage samples and processes the outputs; TTFT/TPOT/ITL stamp the time a batch leaves
// it. Intake, the "cannot schedule" error, multi-step passes, speculative decoding and the host
// KV tier's copies exist once, for every depth. Hosts and links are reached only through the
// contract's sc_interfaces (proto/engine.hpp: StepExecutor, ActivationChannel). The engine's
// software overheads of each step (serving/host_overheads.hpp) are computed here and handed to
// the host with the step (proto::HostPhases).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/dtype.hpp"
#include "kernels/model_config.hpp"
#include "kernels/step.hpp"
#include "kernels/step_decomposer.hpp"
#include "proto/engine.hpp"
#include "sc_modules/sim/sim.hpp"
#include "base/util/trace_recorder.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/host_kv_link.hpp"
#include "serving/host_overheads.hpp"
#include "serving/kv_cache.hpp"
#include "serving/metrics_recorder.hpp"
#include "serving/speculative.hpp"
#include "base/util/rng.hpp"

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
  double busy_s = 0;     // summed over pipeline stages
  double host_s = 0;     // prepare + finish overheads
  double gpu_wait_s = 0; // host waiting for the GPU
  // Scheduled batches and their sequences (mean batch size); KV-cache usage integrated over
  // the time between batch completions, and its peak.
  std::uint64_t batches = 0, batched_sequences = 0;
  double kv_usage_seconds = 0, kv_usage_peak = 0, kv_last_s = 0;
  // Speculative decoding (all zero without it): verified sequences with drafts, drafts,
  // accepted drafts, acceptances per draft position, proposer passes on the GPU and the
  // proposer's CPU time (n-gram lookup).
  std::int64_t spec_verified = 0, spec_draft_tokens = 0, spec_accepted = 0;
  std::vector<std::int64_t> spec_accepted_at;
  std::uint64_t spec_draft_passes = 0;
  double spec_proposer_cpu_s = 0;
  // Host KV tier (zero without it): steps whose start waited for blocks loaded from the host,
  // and the time they waited.
  std::uint64_t host_kv_delayed_steps = 0;
  double host_kv_wait_s = 0;
};

// The host KV tier's link, per tensor-parallel rank (each copies its shard over its own link).
struct HostKvLinkConfig {
  double bandwidth = 0;        // bytes/s per direction
  double latency_s = 0;        // per copy
  double bytes_per_block = 0;  // a block's KV on one GPU (all its layers)
};

class Replica {
 public:
  Replica(sim::Environment& env, ReplicaSpec spec, proto::StepExecutor& host, std::unique_ptr<KvBlockManager> kv,
          std::unique_ptr<BatchScheduler> scheduler, MetricsRecorder& metrics);
  // Pipeline parallel: one host per stage (spec.parallel.pp of them) and the links between
  // consecutive stages (pp - 1).
  Replica(sim::Environment& env, ReplicaSpec spec, std::vector<proto::StepExecutor*> stage_hosts,
          std::vector<proto::ActivationChannel*> links, std::unique_ptr<KvBlockManager> kv,
          std::unique_ptr<BatchScheduler> scheduler, MetricsRecorder& metrics);

  // Turns on speculative decoding (before the simulation runs; pp = 1 only, else
  // std::invalid_argument): the proposer's kernels are priced on this replica's GPUs, and the
  // accepted drafts are drawn from the stream of component "<name>.spec_decode" under `seed`.
  void set_speculative(const SpecDecodeConfig& spec, std::uint64_t seed);
  // Turns on the copies of the host KV tier (before the simulation runs; the KV manager must have
  // its host tier, else std::invalid_argument): after each scheduling, the blocks the host tier
  // must load are copied over the link before the step starts, and the blocks HBM wrote back are
  // copied on the other direction in the background.
  void set_host_kv_link(const HostKvLinkConfig& link);
  // The engine's software overheads per step (scheduling and input preparation before the
  // launches, sampling and output processing after the GPU), handed to the host with each step
  // (proto::HostPhases). None (the default): a step costs only its launches and the GPU.
  void set_host_overheads(std::shared_ptr<const HostOverheads> overheads) { overheads_ = std::move(overheads); }
  const HostKvLink* host_kv_link() const { return host_link_.get(); }
  void submit(Request* request);
  std::size_t outstanding() const { return outstanding_; }
  const ReplicaStats& stats() const { return stats_; }
  const KvBlockManager& kv() const { return *kv_; }
  const BatchScheduler& scheduler() const { return *scheduler_; }
  // Called for every request that finishes (e.g. a closed-loop source sends the next one).
  void set_on_finish(std::function<void(Request&)> callback) { on_finish_ = std::move(callback); }
  // Records queue and KV-cache counters after each step and each finished request's
  // queued / prefill / decode spans on `track` (nullptr: no tracing, the default).
  void set_trace(util::TraceRecorder* trace, int track) {
    trace_ = trace;
    trace_track_ = track;
  }

 private:
  // A scheduled batch on its way through the pipeline's stages. pp = 1 is a one-stage pipeline
  // whose stage runs in the engine process itself (no hand-over, no extra process switch).
  struct MicroBatch {
    StepPlan plan;
    std::uint64_t step = 0;  // id of its first pass (a multi-step batch runs plan.steps passes)
    kernels::StepBatch batch;
    std::vector<std::uint64_t> request_ids;
    std::vector<kernels::StepKernels> stages;  // per stage (pp > 1; pp = 1 decomposes per pass)
    proto::StepShape shape;
    // Speculative decoding, per decode of `batch`: 1 + its drafts, and its drafts.
    std::vector<std::int64_t> decode_queries, decode_drafts;
  };
  struct Handover {
    MicroBatch* batch;
    sc_core::sc_time arrival;  // when the previous stage's activations are all in
  };

  void engine_loop();
  void take_requests();
  bool schedule_next();  // false: nothing could be scheduled
  void dispatch(MicroBatch& batch);
  void run_stage(MicroBatch& batch, int stage);
  void stage_loop(int stage);  // pp > 1: stage `stage` as a process of its own
  void retire(MicroBatch& batch);
  void account(const proto::StepTiming& timing);
  void finish_step(const StepPlan& plan);
  void to_batch(MicroBatch& batch);
  // One speculative step: the proposer's passes, then the verification of every decode's drafts.
  void speculative_step(MicroBatch& batch);
  // The seconds of the phases this step includes on its host.
  proto::HostPhases host_phases(const proto::StepShape& shape, bool prepare, bool finish) const;

  sim::Environment& env_;
  ReplicaSpec spec_;
  std::vector<proto::StepExecutor*> hosts_;  // one per pipeline stage
  std::vector<proto::ActivationChannel*> links_;
  std::shared_ptr<const HostOverheads> overheads_;
  std::unique_ptr<KvBlockManager> kv_;
  std::unique_ptr<BatchScheduler> scheduler_;
  MetricsRecorder& metrics_;
  sim::Store<Request*> inbox_;
  std::size_t outstanding_ = 0;
  ReplicaStats stats_;
  StepOutcome outcome_;   // refilled every step (finish_step)
  kernels::StepDecomposer decomposer_;  // pp = 1: refills its kernels every pass
  kernels::ChunkPool stage_chunks_;      // pp > 1: the stages' kernels, made every step
  std::function<void(Request&)> on_finish_;
  // A slot per in-flight micro-batch (pp of them, reused in order: batches retire in order;
  // refilled in place, so no allocation per step); with pp > 1 a queue per stage and the
  // batches that have left the last stage.
  std::vector<std::unique_ptr<MicroBatch>> slots_;
  std::vector<std::unique_ptr<sim::Store<Handover>>> stage_inbox_;
  std::unique_ptr<sim::Store<MicroBatch*>> done_;
  int in_flight_ = 0;
  util::TraceRecorder* trace_ = nullptr;
  int trace_track_ = -1;
  // Speculative decoding (spec_decode_ null: off).
  std::unique_ptr<SpecDecodeConfig> spec_decode_;
  std::unique_ptr<kernels::StepDecomposer> draft_decomposer_;
  std::unique_ptr<util::Rng> spec_rng_;
  kernels::StepBatch draft_batch_;
  kernels::StepKernels draft_kernels_;
  kernels::ChunkPool draft_fc_chunks_;  // EAGLE / MTP: the fusion kernel, one chunk a pass

  void trace_step(const StepOutcome& outcome);
  // The host tier's copies for the step just scheduled (no-op without a host tier).
  void copy_host_kv();
  std::unique_ptr<HostKvLink> host_link_;
  double host_bytes_per_block_ = 0;
};

}  // namespace ks::serving
