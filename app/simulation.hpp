#pragma once
// A scenario turned into a running simulation: reads the scenario document (every section
// through its registered schema), elaborates the SystemC modules (environment, GPUs, hosts,
// replicas, request source), runs it, and reports the vllm-bench metrics.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/pd_simulation.hpp"
#include "app/scenario_spec.hpp"
#include "app/replica_module.hpp"
#include "hw/gpu/gpu_module.hpp"
#include "hw/gpu/pipeline_link.hpp"
#include "hw/gpu/tp_group.hpp"
#include "hw/interconnect/fabric_module.hpp"
#include "hw/interconnect/interconnect_kind.hpp"
#include "hw/host/host_cpu.hpp"
#include "base/config/document.hpp"
#include "sc_modules/sim/sim.hpp"
#include "sc_modules/tree/module_registry.hpp"
#include "base/util/trace_recorder.hpp"
#include "serving/metrics.hpp"
#include "serving/metrics_recorder.hpp"
#include "serving/memory_plan.hpp"
#include "serving/replica.hpp"
#include "serving/request_source.hpp"
#include "serving/router.hpp"
#include "serving/speculative.hpp"
#include "serving/workload.hpp"

namespace ks::app {

// What `--exact` sets: every shortcut off (one TLM transaction per kernel, no kernel-cost memo).
// The fast path must give the same summary (tests/cli/exact_cli_test.cpp).
inline constexpr const char* kExactOverrides[] = {"hardware.host.launch_granularity=kernel",
                                                  "hardware.gpu.memoise=false"};

class Simulation {
 public:
  // read_scenario, then elaboration. Throws config::ConfigError for bad scenarios; call
  // sim::setup_kernel() first.
  explicit Simulation(config::Document& scenario);
  // Elaborates the module tree of a scenario read and checked by read_scenario.
  explicit Simulation(ScenarioSpec spec);
  const ScenarioSpec& spec() const { return spec_; }

  // Records a timeline while running (call before run): tracks per GPU stream, TP collectives,
  // host phases, requests, and queue / KV-cache counters. Off by default: no hook does any work.
  void enable_trace(const util::TraceOptions& options);
  // The trace as Chrome / Perfetto JSON (enable_trace first; call once, after the run).
  std::string trace_json();
  const util::TraceRecorder* trace() const { return trace_.get(); }

  void run();
  // Runs until simulated time `until_s` or the end; returns true once the simulation is over.
  // Results do not depend on how a run is sliced (the progress bar slices it).
  bool run_until(double until_s);
  double now_seconds() const { return env_->now_seconds(); }
  // Requests finished so far, and how many the workload will send (0: not known in advance).
  std::int64_t completed() const { return static_cast<std::int64_t>(metrics_.requests().size()); }
  std::int64_t expected_requests() const { return spec_.expected_requests; }

  const std::string& name() const { return spec_.name; }
  const std::string& output_dir() const { return spec_.output_dir; }
  serving::BenchmarkSummary summary() const;
  // summary.json: the vllm-bench keys plus the scenario's identity and engine statistics.
  nlohmann::json report() const;
  std::uint64_t total_steps() const;
  std::uint64_t total_kernels() const;
  // Every request submitted, in arrival order (unfinished ones have finish_s < 0).
  const std::deque<serving::Request>& requests() const { return source_->requests(); }
  // The module tree: replica i (replica<i>, or prefill<i> / decode<i> with disaggregation,
  // prefill first) with its stages, GPUs, TP groups, links and engine (app/replica_module.hpp).
  const std::vector<std::unique_ptr<ReplicaModule>>& replicas() const { return replicas_; }
  // Parameters and statistics of every module, by hierarchical name
  // ("replica0.stage1.gpu0.busy_seconds"; docs/architecture.md lists them).
  const tree::ModuleRegistry& modules() const { return modules_; }
  // Every GPU, replica by replica, stage by stage, rank by rank.
  std::vector<const hw::GpuModule*> gpus() const;
  // What each GPU reported (in the order of gpus()), for kernels.csv and the GPU time.
  std::vector<const proto::KernelStatsTable*> gpu_stats() const;
  const serving::MetricsRecorder& metrics() const { return metrics_; }
  // The disaggregated deployment's parts (null without `disaggregation:`).
  const PdParts* disaggregation() const { return pd_.get(); }
  // Sends between pipeline stages (empty without PP), for kernels.csv.
  std::vector<const hw::PipelineLink*> pipeline_links() const;

 private:
  serving::RequestSourceSettings source_settings() const;
  std::vector<serving::Replica*> engines();
  void add_prefix_cache_report(nlohmann::json& j) const;
  void add_utilization_report(nlohmann::json& j) const;
  void add_context_and_spec_report(nlohmann::json& j) const;
 public:
  // Speculative decoding's counters summed over the replicas (enabled false without it).
  serving::SpecDecodeStats spec_decode_stats() const;
 private:
  // Prefill/decode disaggregation (app/pd_simulation.cpp): both pools' replica modules go into
  // replicas_ (prefill first); pd_ holds the rest.
  void elaborate_disaggregated(PdPlan plan, const PdElabInputs& in);
  void enable_disaggregated_trace(util::TraceRecorder* trace);
  ScenarioSpec spec_;
  std::unique_ptr<PdParts> pd_;  // null: one pool
  std::unique_ptr<sim::Environment> env_;
  int tp_ = 1;
  int pp_ = 1;
  std::unique_ptr<hw::InterconnectParts> interconnect_;  // hardware.interconnect (tp or pp > 1)
  hw::FabricModule* fabric_ = nullptr;                    // interconnect_'s, when it is the built-in fabric
  std::vector<std::unique_ptr<ReplicaModule>> replicas_;
  tree::ModuleRegistry modules_;
  std::unique_ptr<serving::Workload> workload_;
  std::unique_ptr<serving::Router> router_;
  serving::MetricsRecorder metrics_;
  serving::MemoryPlan memory_;
  std::string gpu_name_;
  std::unique_ptr<serving::RequestSource> source_;  // the request_source process (serving/request_source.hpp)
  std::unique_ptr<util::TraceRecorder> trace_;
  std::string kv_sizing_key_ = "cache.gpu_memory_utilization";  // the key that sized the KV cache, for errors
  // Summarised once after run(): the percentiles sort every latency (millions of ITLs).
  mutable std::optional<serving::BenchmarkSummary> summary_;
  bool finished_ = false;  // closed-loop workloads: one item per finished request
};

}  // namespace ks::app
