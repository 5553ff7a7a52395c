#include "app/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/dtype.hpp"
#include "kernels/model_config.hpp"
#include "serving/batch_scheduler.hpp"

namespace ks::app {
namespace {

// cache.host_kv_bytes > 0: the KV manager's host tier (as many whole blocks as the bytes per GPU
// hold) and its link; a zero bytes_per_block in the result means no tier.
serving::HostKvLinkConfig host_kv_tier(serving::KvBlockManager& kv, const config::Params& cache_p,
                                       const kernels::GpuSpec& gpu, double block_bytes) {
  serving::HostKvLinkConfig link;
  const double bytes = cache_p.number("host_kv_bytes");
  if (bytes <= 0) return link;
  if (!kv.prefix_caching())
    throw config::ConfigError(cache_p.mark("host_kv_bytes"), "cache.host_kv_bytes",
                              "a host KV tier keeps cached prefix blocks: it needs cache.enable_prefix_caching: true");
  const double blocks = std::floor(bytes / block_bytes);
  if (blocks < 1)
    throw config::ConfigError(cache_p.mark("host_kv_bytes"), "cache.host_kv_bytes",
                              "expected room for at least one KV block of " + serving::describe_bytes(block_bytes) +
                                  " per GPU, got " + serving::describe_bytes(bytes));
  link.bandwidth = cache_p.number("host_kv_link_bandwidth");
  if (link.bandwidth <= 0) link.bandwidth = 0.4 * gpu.pcie_bandwidth;
  if (link.bandwidth <= 0)
    throw config::ConfigError(cache_p.mark("host_kv_link_bandwidth"), "cache.host_kv_link_bandwidth",
                              "GPU '" + gpu.name + "' gives no pcie_bandwidth: expected a bandwidth such as 50GB/s");
  link.latency_s = cache_p.number("host_kv_link_latency");
  link.bytes_per_block = block_bytes;
  kv.enable_host_tier(static_cast<std::int64_t>(blocks));
  return link;
}

}  // namespace

Simulation::Simulation(config::Document& scenario) : Simulation(read_scenario(scenario)) {}

Simulation::Simulation(ScenarioSpec spec) : spec_(std::move(spec)) {
  // The spec's parts under the names the elaboration reads them by.
  const ScenarioSpec& s = spec_;
  tp_ = s.parallel.tp;
  pp_ = s.parallel.pp;
  const kernels::ModelConfig* model = s.model.get();
  const config::Params& model_p = s.model_p;
  const kernels::DType weight_dtype = s.weight_dtype;
  const kernels::DType kv_dtype = s.kv_dtype;
  const hw::GpuRegistry::Entry& gpu_entry = *s.gpu_entry;
  const config::Params& gpu_p = s.gpu_p;
  const kernels::ParallelConfig& parallel = s.parallel;
  const std::shared_ptr<interconnect::Topology>& topology = s.topology;
  const hw::InterconnectRegistry::Entry* ic_entry = s.interconnect_entry;
  const serving::HostOverheadsRegistry::Entry& host_entry = *s.host_entry;
  const config::Params& host_p = s.host_p;
  const serving::SchedulerRegistry::Entry& sched_entry = *s.scheduler_entry;
  const config::Params& engine_p = s.engine_p;
  const config::Params& cache_p = s.cache_p;

  // Elaboration.
  env_ = std::make_unique<sim::Environment>("env");
  workload_ = s.workload_entry->make({s.workload_p, s.seed});
  router_ = s.router_entry->make({s.router_p});
  if (s.disaggregation) {  // two pools: app/pd_simulation.cpp
    elaborate_disaggregated(*s.disaggregation,
                            PdElabInputs{ic_entry, s.interconnect_p ? &*s.interconnect_p : nullptr, topology, &host_entry, &host_p, &sched_entry,
                                         &engine_p, &cache_p, &model_p, model, weight_dtype, kv_dtype});
    serving::PdCoordinator* coordinator = pd_->coordinator.get();
    source_ = std::make_unique<serving::RequestSource>(*env_, *workload_, source_settings(), engines(), nullptr,
                                                       [coordinator](serving::Request* r) { coordinator->submit(r); });
    if (workload_->max_concurrency() > 0)
      coordinator->set_on_finish([this](serving::Request&) { source_->finished(); });
    return;
  }
  if (tp_ > 1 || pp_ > 1) {  // unbound sockets are errors
    interconnect_ = ic_entry != nullptr ? ic_entry->make({"fabric", topology, *s.interconnect_p}) : hw::make_fabric("fabric", topology);
    fabric_ = interconnect_->fabric;
  }
  const hw::LaunchPolicy launch = hw::launch_policy(host_p);
  const std::shared_ptr<const serving::HostOverheads> overheads = host_entry.make(host_p);  // fitted once
  // The engine of each replica, made once its stages exist: the KV cache is sized by the memory
  // plan of the replica's GPUs.
  auto make_engine = [&](ReplicaModule& replica) {
    const kernels::GpuSpec& gpu = replica.stage(0).gpu(0).spec();
    serving::MemoryInputs mem;
    mem.gpu_memory_bytes = gpu.memory_bytes;
    mem.gpu_memory_utilization = cache_p.number("gpu_memory_utilization");
    mem.kv_free_memory_fraction = cache_p.number("kv_cache_free_memory_fraction");
    if (mem.kv_free_memory_fraction > 0) kv_sizing_key_ = "cache.kv_cache_free_memory_fraction";
    mem.weight_dtype = weight_dtype;
    mem.kv_dtype = kv_dtype;
    mem.tp = tp_;
    mem.pp = pp_;
    mem.dp_attention = parallel.dp_attention;
    mem.block_size = cache_p.integer("block_size");
    mem.max_num_batched_tokens = engine_p.has("max_num_batched_tokens") ? engine_p.integer("max_num_batched_tokens") : 8192;
    mem.max_num_seqs = engine_p.has("max_num_seqs") ? engine_p.integer("max_num_seqs") : 256;
    if (spec_.spec_decode) {
      mem.proposer_weight_bytes = serving::proposer_weight_bytes(*spec_.spec_decode, weight_dtype, tp_);
      mem.proposer_kv_bytes_per_token = serving::proposer_kv_bytes_per_token(*spec_.spec_decode, kv_dtype, tp_);
    }
    try {
      memory_ = serving::plan_memory(*model, mem);
    } catch (const std::invalid_argument& e) {
      const std::string key = model_p.string("config").empty() ? "name" : "config";
      throw config::ConfigError(model_p.mark(key), "model." + key, e.what());
    }
    gpu_name_ = gpu.name;
    if (const kernels::DType gemm = kernels::gemm_compute_dtype(weight_dtype); !gpu.supports(gemm))
      throw config::ConfigError(model_p.mark("dtype"), "model.dtype",
                                "GPU '" + gpu_name_ + "' has no " + std::string(kernels::dtype_name(gemm)) +
                                    " tensor cores (no peak_" + std::string(kernels::dtype_name(gemm)) +
                                    " in its spec): choose another dtype or GPU, or give hardware.gpu.peak_" +
                                    std::string(kernels::dtype_name(gemm)));

    auto kv = std::make_unique<serving::KvBlockManager>(memory_.kv_blocks, mem.block_size,
                                                       cache_p.flag("enable_prefix_caching"));
    const serving::HostKvLinkConfig host_link =
        host_kv_tier(*kv, cache_p, gpu, memory_.kv_bytes_per_token * static_cast<double>(mem.block_size));
    serving::SchedulerArgs sched_args{engine_p, kv.get()};
    auto scheduler = sched_entry.make(sched_args);
    serving::ReplicaSpec spec{replica.basename(), *model, weight_dtype, kv_dtype, parallel};
    auto engine = std::make_unique<serving::Replica>(*env_, spec, replica.stage_executors(), replica.channels(),
                                                     std::move(kv), std::move(scheduler), metrics_);
    engine->set_host_overheads(overheads);
    if (spec_.spec_decode) engine->set_speculative(*spec_.spec_decode, spec_.seed);
    if (host_link.bytes_per_block > 0) engine->set_host_kv_link(host_link);
    return engine;
  };
  for (int i = 0; i < s.replicas; ++i) {
    // Replica i's stage s starts at device (i*pp + s)*tp: a TP group stays inside a node when tp
    // divides gpus_per_node, and consecutive stages sit on the next GPUs.
    ReplicaBuild build;
    build.pp = pp_;
    build.stage = StageBuild{tp_, i * pp_ * tp_, &gpu_entry, &gpu_p, launch, interconnect_.get()};
    build.make_engine = make_engine;
    replicas_.push_back(std::make_unique<ReplicaModule>(("replica" + std::to_string(i)).c_str(), build));
    replicas_.back()->register_in(modules_);
  }
  source_ = std::make_unique<serving::RequestSource>(*env_, *workload_, source_settings(), engines(), router_.get());
  if (workload_->max_concurrency() > 0)
    for (auto& replica : replicas_) replica->engine().set_on_finish([this](serving::Request&) { source_->finished(); });
}

serving::RequestSourceSettings Simulation::source_settings() const {
  serving::RequestSourceSettings s;
  s.max_model_len = spec_.max_model_len;
  s.max_model_len_given = spec_.max_model_len_given;
  s.reject_long_requests = spec_.reject_long_requests;
  s.workload_mark = spec_.workload_mark;
  s.kv_sizing_key = kv_sizing_key_;
  return s;
}

std::vector<serving::Replica*> Simulation::engines() {
  std::vector<serving::Replica*> out;
  for (auto& replica : replicas_) out.push_back(&replica->engine());
  return out;
}

std::vector<const hw::GpuModule*> Simulation::gpus() const {
  std::vector<const hw::GpuModule*> out;
  for (const auto& replica : replicas_)
    for (int s = 0; s < replica->pp(); ++s)
      for (int r = 0; r < replica->tp(); ++r) out.push_back(&replica->stage(s).gpu(r));
  return out;
}

std::vector<const proto::KernelStatsTable*> Simulation::gpu_stats() const {
  std::vector<const proto::KernelStatsTable*> out;
  for (const auto& replica : replicas_)
    for (int s = 0; s < replica->pp(); ++s)
      for (int r = 0; r < replica->tp(); ++r) out.push_back(&replica->stage(s).gpu_stats(r));
  return out;
}

std::vector<const hw::PipelineLink*> Simulation::pipeline_links() const {
  std::vector<const hw::PipelineLink*> out;
  for (const auto& replica : replicas_)
    for (int s = 0; s < replica->num_links(); ++s) out.push_back(&replica->link(s));
  return out;
}

void Simulation::run() {
  summary_.reset();
  env_->run();
  finished_ = true;
}

bool Simulation::run_until(double until_s) {
  if (until_s > env_->now_seconds()) env_->run(sim::seconds(until_s));
  if (!env_->pending()) finished_ = true;  // the summary can be cached, as after run()
  return finished_;
}

void Simulation::enable_trace(const util::TraceOptions& options) {
  trace_ = std::make_unique<util::TraceRecorder>(options);
  util::TraceRecorder* t = trace_.get();
  if (pd_) {
    enable_disaggregated_trace(t);
    return;
  }
  // Track order: per replica its hosts and requests, then per stage its GPUs' streams and its
  // collectives, then the sends between stages.
  const auto pp = static_cast<std::size_t>(pp_), tp = static_cast<std::size_t>(tp_);
  for (std::size_t i = 0; i < replicas_.size(); ++i) {
    const std::string rname = "replica" + std::to_string(i);
    for (std::size_t st = 0; st < pp; ++st) {
      const std::string what = pp > 1 ? "stage " + std::to_string(st) + " host" : "host";
      replicas_[i]->stage(static_cast<int>(st)).host().set_trace(t, t->track(rname, what + " (prepare / launch / wait / finish)"));
    }
    replicas_[i]->engine().set_trace(t, t->track(rname, "requests"));
    for (std::size_t st = 0; st < pp; ++st) {
      const std::string sname = pp > 1 ? rname + " stage" + std::to_string(st) : rname;
      for (std::size_t r = 0; r < tp; ++r) {
        StageModule& stage = replicas_[i]->stage(static_cast<int>(st));
        const hw::GpuModule& gpu = stage.gpu(static_cast<int>(r));
        const std::string process = sname + " gpu" + std::to_string(r) + " (device " + std::to_string(gpu.device_id()) + ")";
        stage.gpu_trace(static_cast<int>(r)).attach(t, process);
        t->track(process, "stream 0");  // created now so the processes appear in this order
      }
      if (tp_ > 1) replicas_[i]->stage(static_cast<int>(st)).tp_group()->set_trace(t, t->track(sname + " TP collectives", "collectives over " + spec_.topology_kind));
    }
    for (std::size_t st = 0; st + 1 < pp; ++st)
      replicas_[i]->link(static_cast<int>(st)).set_trace(
          t, t->track(rname + " PP send/recv", "stage " + std::to_string(st) + " -> " + std::to_string(st + 1) +
                                                   " over " + spec_.topology_kind));
  }
  if (fabric_) fabric_->set_trace(t, "links of " + spec_.topology_kind);  // a track per link, on first use
}

std::string Simulation::trace_json() { return trace_ ? trace_->json() : std::string(); }

serving::BenchmarkSummary Simulation::summary() const {
  if (summary_) return *summary_;
  serving::BenchmarkSummary s = serving::summarize(metrics_.requests(), metrics_.itls(), metrics_.last_finish_s());
  if (spec_.spec_decode) s.spec = spec_decode_stats();
  if (finished_) summary_ = s;
  return s;
}

std::uint64_t Simulation::total_steps() const {
  std::uint64_t n = 0;
  for (const auto& r : replicas_) n += r->engine().stats().steps;
  return n;
}

std::uint64_t Simulation::total_kernels() const {
  std::uint64_t n = 0;
  for (const auto& r : replicas_) n += r->engine().stats().kernels;
  return n;
}

nlohmann::json Simulation::report() const {
  nlohmann::json j = serving::to_json(summary());
  j["scenario"] = spec_.name;
  j["seed"] = spec_.seed;
  j["model"] = spec_.model->name;
  j["gpu"] = gpu_name_;
  j["submitted"] = source_->submitted();
  std::uint64_t preemptions = 0;
  for (const auto& r : replicas_) preemptions += r->engine().stats().preemptions;
  j["engine_steps"] = total_steps();
  std::uint64_t whole = 0;
  for (const auto& r : replicas_)
    for (int s = 0; s < r->pp(); ++s) whole += r->stage(s).host().whole_step_launches();
  j["whole_step_launches"] = whole;  // steps sent as one TLM transaction (launch_granularity: step)
  j["kernels_launched"] = total_kernels();
  j["preemptions"] = preemptions;
  j["tensor_parallel"] = tp_;
  j["pipeline_parallel"] = pp_;
  j["topology"] = spec_.topology_kind;
  std::uint64_t collectives = 0;
  double comm_s = 0, exposed_s = 0;
  for (const auto& r : replicas_)
    for (int s = 0; s < r->pp(); ++s)
      if (const hw::TpGroup* g = r->stage(s).tp_group()) {
        collectives += g->collectives();
        comm_s += g->comm_seconds();
        exposed_s += g->exposed_comm_seconds();
      }
  j["collectives"] = collectives;
  j["collective_seconds"] = comm_s;
  j["exposed_collective_seconds"] = exposed_s;
  if (pp_ > 1) {  // activations handed from stage to stage (one send per TP rank)
    hw::TransferStats sends;
    for (const hw::PipelineLink* link : pipeline_links())
      for (const auto& [phase, st] : link->stats()) {
        sends.transfers += st.transfers;
        sends.seconds += st.seconds;
        sends.bytes += st.bytes;
      }
    j["pipeline_sends"] = sends.transfers;
    j["pipeline_send_seconds"] = sends.seconds;
    j["pipeline_send_bytes"] = sends.bytes;
  }
  j["kv_cache_blocks_per_replica"] = memory_.kv_blocks;
  j["kv_cache_tokens_per_replica"] = memory_.kv_tokens;
  add_prefix_cache_report(j);
  add_context_and_spec_report(j);
  add_utilization_report(j);
  if (pd_) {
    j["disaggregation"] = pd_report(*pd_, replicas_, summary().duration_s);
  }
  return j;
}

// How busy the deployment was, and what it cost: GPU time over GPU-seconds of the run, sequences
// per scheduled batch, time-weighted KV-cache usage, and, given a GPU-hour price, the cost.
void Simulation::add_utilization_report(nlohmann::json& j) const {
  const serving::BenchmarkSummary s = summary();
  double busy = 0;
  for (const proto::KernelStatsTable* g : gpu_stats()) busy += g->busy_seconds();
  const double gpu_seconds = s.duration_s * static_cast<double>(gpus().size());
  j["gpu_utilization"] = gpu_seconds > 0 ? busy / gpu_seconds : 0.0;
  std::uint64_t batches = 0, sequences = 0;
  double kv_seconds = 0, kv_span = 0, kv_peak = 0;
  for (const auto& r : replicas_) {
    const serving::ReplicaStats& st = r->engine().stats();
    batches += st.batches;
    sequences += st.batched_sequences;
    kv_seconds += st.kv_usage_seconds;
    kv_span += st.kv_last_s;
    kv_peak = std::max(kv_peak, st.kv_usage_peak);
  }
  j["mean_batch_size"] = batches > 0 ? static_cast<double>(sequences) / static_cast<double>(batches) : 0.0;
  j["mean_kv_cache_usage"] = kv_span > 0 ? kv_seconds / kv_span : 0.0;
  j["peak_kv_cache_usage"] = kv_peak;
  if (spec_.price_per_gpu_hour > 0) {
    const double cost = spec_.price_per_gpu_hour * gpu_seconds / 3600.0;
    j["price_per_gpu_hour"] = spec_.price_per_gpu_hour;
    j["cost"] = cost;
    j["cost_per_million_output_tokens"] =
        s.total_output_tokens > 0 ? cost / (static_cast<double>(s.total_output_tokens) / 1e6) : 0.0;
    j["cost_per_million_total_tokens"] =
        s.total_input_tokens + s.total_output_tokens > 0
            ? cost / (static_cast<double>(s.total_input_tokens + s.total_output_tokens) / 1e6)
            : 0.0;
  }
}

// --- Context length and speculative decoding (present only when configured or when a request
// was rejected, so that other scenarios' summaries are unchanged). ---
void Simulation::add_context_and_spec_report(nlohmann::json& j) const {
  if (spec_.max_model_len_given || source_->context_rejected() > 0) {
    j["max_model_len"] = spec_.max_model_len;
    j["context_length_rejected_requests"] = source_->context_rejected();
  }
  if (!spec_.spec_decode) return;
  const serving::SpecDecodeStats s = spec_decode_stats();
  j["spec_decode_method"] = serving::spec_method_name(spec_.spec_decode->method);
  j["spec_decode_num_speculative_tokens"] = spec_.spec_decode->num_speculative_tokens;
  j["spec_decode_num_drafts"] = s.drafts;
  j["spec_decode_num_draft_tokens"] = s.draft_tokens;
  j["spec_decode_num_accepted_tokens"] = s.accepted;
  j["spec_decode_acceptance_rate"] = s.acceptance_rate();
  j["spec_decode_mean_acceptance_length"] = s.mean_acceptance_length();
  j["spec_decode_expected_acceptance_length"] = spec_.spec_decode->acceptance.mean_acceptance_length();
  nlohmann::json per_position = nlohmann::json::array();
  for (std::size_t i = 0; i < s.accepted_at.size(); ++i)
    per_position.push_back(s.drafts > 0 ? static_cast<double>(s.accepted_at[i]) / static_cast<double>(s.drafts) : 0.0);
  j["spec_decode_per_position_acceptance_rate"] = per_position;
  j["spec_decode_tokens_per_step"] = s.tokens_per_step();
  j["spec_decode_proposer_passes"] = s.proposer_passes;
  j["spec_decode_proposer_cpu_seconds"] = s.proposer_cpu_s;
}

serving::SpecDecodeStats Simulation::spec_decode_stats() const {
  serving::SpecDecodeStats s;
  if (!spec_.spec_decode) return s;
  s.enabled = true;
  s.accepted_at.assign(static_cast<std::size_t>(spec_.spec_decode->num_speculative_tokens), 0);
  for (const auto& r : replicas_) {
    const serving::ReplicaStats& st = r->engine().stats();
    s.drafts += st.spec_verified;
    s.draft_tokens += st.spec_draft_tokens;
    s.accepted += st.spec_accepted;
    for (std::size_t i = 0; i < st.spec_accepted_at.size() && i < s.accepted_at.size(); ++i)
      s.accepted_at[i] += st.spec_accepted_at[i];
    s.steps += static_cast<std::int64_t>(st.steps);
    s.proposer_passes += static_cast<std::int64_t>(st.spec_draft_passes);
    s.proposer_cpu_s += st.spec_proposer_cpu_s;
  }
  s.output_tokens = 0;
  for (const serving::RequestRecord& r : metrics_.requests()) s.output_tokens += r.output_tokens;
  return s;
}

void Simulation::add_prefix_cache_report(nlohmann::json& j) const {
  serving::PrefixCacheStats total;
  for (const auto& r : replicas_) {
    const serving::PrefixCacheStats& s = r->engine().kv().stats();
    total.query_tokens += s.query_tokens;
    total.hit_tokens += s.hit_tokens;
    total.evictions += s.evictions;
  }
  j["prefix_cache_query_tokens"] = total.query_tokens;
  j["prefix_cache_hit_tokens"] = total.hit_tokens;
  j["prefix_cache_hit_rate"] = total.hit_rate();
  j["prefix_cache_evictions"] = total.evictions;
  // The host KV tier, only when on (other scenarios' summaries stay unchanged). Bytes count every
  // GPU's shard (a replica's GPUs copy theirs at once); seconds are the busy time of one rank's link.
  if (replicas_.empty() || replicas_.front()->engine().host_kv_link() == nullptr) return;
  serving::HostKvStats host;
  serving::HostKvLinkStats link;
  std::uint64_t delayed = 0;
  double wait_s = 0;
  for (const auto& r : replicas_) {
    const serving::HostKvStats& h = r->engine().kv().host_tier()->stats();
    host.stored_blocks += h.stored_blocks;
    host.loaded_blocks += h.loaded_blocks;
    host.evicted_blocks += h.evicted_blocks;
    host.hit_tokens += h.hit_tokens;
    const serving::HostKvLinkStats& l = r->engine().host_kv_link()->stats();
    link.loads += l.loads;
    link.stores += l.stores;
    link.load_seconds += l.load_seconds;
    link.store_seconds += l.store_seconds;
    delayed += r->engine().stats().host_kv_delayed_steps;
    wait_s += r->engine().stats().host_kv_wait_s;
  }
  const double gpus = static_cast<double>(tp_) * pp_;
  const double block_bytes = memory_.kv_bytes_per_token * static_cast<double>(replicas_.front()->engine().kv().block_size());
  nlohmann::json h;
  h["capacity_blocks_per_replica"] = replicas_.front()->engine().kv().host_tier()->capacity_blocks();
  h["block_bytes_per_gpu"] = block_bytes;
  h["link_bandwidth_bytes_per_s"] = replicas_.front()->engine().host_kv_link()->bandwidth();
  h["link_latency_s"] = replicas_.front()->engine().host_kv_link()->latency_s();
  h["hit_tokens"] = host.hit_tokens;
  h["loaded_blocks"] = host.loaded_blocks;
  h["loaded_bytes"] = static_cast<double>(host.loaded_blocks) * block_bytes * gpus;
  h["stored_blocks"] = host.stored_blocks;
  h["stored_bytes"] = static_cast<double>(host.stored_blocks) * block_bytes * gpus;
  h["evicted_blocks"] = host.evicted_blocks;
  h["evicted_bytes"] = static_cast<double>(host.evicted_blocks) * block_bytes * gpus;
  h["loads"] = link.loads;
  h["stores"] = link.stores;
  h["load_seconds"] = link.load_seconds;
  h["store_seconds"] = link.store_seconds;
  h["delayed_steps"] = delayed;
  h["load_wait_seconds"] = wait_s;
  j["host_kv_cache"] = h;
}

}  // namespace ks::app
