#include "serving/replica.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>

#include "kernels/kernel_builders.hpp"
#include "kernels/step_decomposer.hpp"

namespace ks::serving {

namespace {

// "draft_<name>" for a proposer's kernel, so that kernels.csv and the trace keep the proposer's
// kernels apart from the target's. Interned: Kernel::name is a static string.
const char* draft_kernel_name(const char* name) {
  static std::map<const void*, const char*> interned;
  static std::deque<std::string> storage;
  const auto it = interned.find(name);
  if (it != interned.end()) return it->second;
  storage.push_back(std::string("draft_") + name);
  return interned[name] = storage.back().c_str();
}

}  // namespace

Replica::Replica(sim::Environment& env, ReplicaSpec spec, proto::StepExecutor& host, std::unique_ptr<KvBlockManager> kv,
                 std::unique_ptr<BatchScheduler> scheduler, MetricsRecorder& metrics)
    : Replica(env, std::move(spec), std::vector<proto::StepExecutor*>{&host}, {}, std::move(kv), std::move(scheduler),
              metrics) {}

Replica::Replica(sim::Environment& env, ReplicaSpec spec, std::vector<proto::StepExecutor*> stage_hosts,
                 std::vector<proto::ActivationChannel*> links, std::unique_ptr<KvBlockManager> kv,
                 std::unique_ptr<BatchScheduler> scheduler, MetricsRecorder& metrics)
    : env_(env),
      spec_(std::move(spec)),
      hosts_(std::move(stage_hosts)),
      links_(std::move(links)),
      kv_(std::move(kv)),
      scheduler_(std::move(scheduler)),
      metrics_(metrics),
      inbox_(env),
      decomposer_(spec_.model, spec_.weight_dtype, spec_.kv_dtype, spec_.parallel) {
  const int pp = spec_.parallel.pp;
  if (static_cast<int>(hosts_.size()) != pp || static_cast<int>(links_.size()) != pp - 1)
    throw std::invalid_argument("replica '" + spec_.name + "': pp=" + std::to_string(pp) + " needs " +
                                std::to_string(pp) + " stage hosts and " + std::to_string(pp - 1) + " links");
  for (int s = 0; s < pp; ++s) slots_.push_back(std::make_unique<MicroBatch>());
  if (pp > 1) {  // pp = 1: the one stage runs in the engine process
    for (int s = 0; s < pp; ++s) stage_inbox_.push_back(std::make_unique<sim::Store<Handover>>(env_));
    done_ = std::make_unique<sim::Store<MicroBatch*>>(env_);
  }
  env_.process([this] { engine_loop(); }, spec_.name + ".engine");
  for (int s = 0; pp > 1 && s < pp; ++s)
    env_.process([this, s] { stage_loop(s); }, spec_.name + ".stage" + std::to_string(s));
}

void Replica::set_speculative(const SpecDecodeConfig& spec, std::uint64_t seed) {
  if (spec_decode_) throw std::logic_error("replica '" + spec_.name + "': speculative decoding set twice");
  if (spec_.parallel.pp != 1)
    throw std::invalid_argument("replica '" + spec_.name + "': speculative decoding with pipeline parallelism is not modelled");
  if (spec.acceptance.k() != spec.num_speculative_tokens)
    throw std::invalid_argument("replica '" + spec_.name + "': acceptance has " + std::to_string(spec.acceptance.k()) +
                                " positions for " + std::to_string(spec.num_speculative_tokens) + " speculative tokens");
  spec_decode_ = std::make_unique<SpecDecodeConfig>(spec);
  spec_rng_ = std::make_unique<util::Rng>(util::Rng::for_component(seed, spec_.name + ".spec_decode"));
  if (spec.method != SpecMethod::Ngram) {
    draft_decomposer_ = std::make_unique<kernels::StepDecomposer>(spec.draft, spec_.weight_dtype, spec_.kv_dtype,
                                                                  kernels::ParallelConfig{spec_.parallel.tp, 1});
    draft_decomposer_->set_kernel_names(draft_kernel_name);
  }
  stats_.spec_accepted_at.assign(static_cast<std::size_t>(spec.num_speculative_tokens), 0);
  const AcceptanceModel* acceptance = &spec_decode_->acceptance;
  util::Rng* rng = spec_rng_.get();
  scheduler_->set_speculative(spec.num_speculative_tokens,
                              [acceptance, rng](std::int64_t drafts) { return acceptance->sample(drafts, *rng); });
}

void Replica::set_host_kv_link(const HostKvLinkConfig& link) {
  if (kv_->host_tier() == nullptr)
    throw std::invalid_argument("replica '" + spec_.name + "': a host KV link needs a KV cache with a host tier");
  if (!(link.bytes_per_block > 0))
    throw std::invalid_argument("replica '" + spec_.name + "': host KV block bytes must be positive");
  host_link_ = std::make_unique<HostKvLink>(env_, link.bandwidth, link.latency_s);
  host_bytes_per_block_ = link.bytes_per_block;
}

// Stores first (they run in the background on the GPU -> host lane), then the loads, which the
// step waits for: vLLM's offloading connector and LMCache finish a request's loads before its
// forward pass (no layer-wise overlap modelled).
void Replica::copy_host_kv() {
  if (!host_link_) return;
  const std::int64_t stores = kv_->take_host_stores();
  if (stores > 0) host_link_->store(static_cast<double>(stores) * host_bytes_per_block_);
  const std::int64_t loads = kv_->take_host_loads();
  if (loads == 0) return;
  const double start = env_.now_seconds();
  host_link_->load(static_cast<double>(loads) * host_bytes_per_block_);
  ++stats_.host_kv_delayed_steps;
  stats_.host_kv_wait_s += env_.now_seconds() - start;
}

void Replica::submit(Request* request) {
  const std::int64_t needed = kv_->blocks_for(request->prompt_tokens + request->output_tokens);
  if (needed > kv_->num_blocks())
    throw std::runtime_error("request " + std::to_string(request->id) + " needs " + std::to_string(needed) +
                             " KV blocks for " + std::to_string(request->prompt_tokens) + "+" +
                             std::to_string(request->output_tokens) + " tokens, but replica '" + spec_.name +
                             "' has only " + std::to_string(kv_->num_blocks()));
  ++outstanding_;
  inbox_.put(request);
}

void Replica::to_batch(MicroBatch& mb) {
  kernels::StepBatch& batch = mb.batch;
  batch.prefills.clear();  // refilled in place: no allocation per step
  batch.decode_contexts.clear();
  mb.request_ids.clear();
  mb.decode_queries.clear();
  mb.decode_drafts.clear();
  batch.decode_contexts.reserve(mb.plan.sequences.size());
  for (const ScheduledSequence& s : mb.plan.sequences) {
    const Request& r = *s.request;
    mb.request_ids.push_back(r.id);
    // A speculative decode also verifies its drafts: tokens = 1 + drafts.
    const bool decode = (s.tokens == 1 || spec_decode_) && r.generated > 0 && s.cached_before == r.sequence_length() - 1;
    if (decode) {
      batch.decode_contexts.push_back(s.cached_before + 1);
      if (spec_decode_) {
        mb.decode_queries.push_back(s.tokens);
        mb.decode_drafts.push_back(s.tokens - 1);
      }
    } else {
      const bool last = s.cached_before + s.tokens == r.sequence_length();
      batch.prefills.push_back({s.tokens, s.cached_before, last});
    }
  }
}

// vLLM v1's step_with_batch_queue: schedule while the queue has room and something can be
// scheduled; otherwise block on the oldest in-flight batch.
void Replica::engine_loop() {
  const int depth = spec_.parallel.pp;  // micro-batches in flight at most
  for (;;) {
    take_requests();
    if (in_flight_ < depth && schedule_next()) {
      // One stage: it ran in this process, so the batch is out before anything else happens.
      if (depth == 1) retire(*slots_.front());
      continue;
    }
    retire(*done_->get());
  }
}

void Replica::take_requests() {
  if (in_flight_ == 0 && !scheduler_->has_work()) scheduler_->add(inbox_.get());  // idle: sleep until a request
  while (auto r = inbox_.try_get()) scheduler_->add(*r);
}

// Schedules into the next free slot and dispatches the batch.
bool Replica::schedule_next() {
  MicroBatch& mb = *slots_[stats_.steps % slots_.size()];  // batches retire in order: this one is free
  scheduler_->schedule(mb.plan);
  if (mb.plan.steps > 1 && spec_.parallel.pp > 1)  // the scenario check rejects this; a library user gets told here
    throw std::logic_error("replica '" + spec_.name + "': multi-step scheduling with pipeline parallelism is not modelled");
  stats_.preemptions += mb.plan.preempted.size();
  if (mb.plan.empty()) {
    if (in_flight_ == 0)
      throw std::runtime_error("replica '" + spec_.name + "' cannot schedule any request (KV cache of " +
                               std::to_string(kv_->num_blocks()) + " blocks)");
    return false;
  }
  for (const ScheduledSequence& s : mb.plan.sequences) {
    s.request->in_flight = true;
    if (s.request->first_scheduled_s < 0) s.request->first_scheduled_s = env_.now_seconds();
  }
  copy_host_kv();
  dispatch(mb);
  return true;
}

void Replica::dispatch(MicroBatch& mb) {
  mb.step = stats_.steps;
  stats_.steps += static_cast<std::uint64_t>(mb.plan.steps);
  to_batch(mb);
  mb.shape = proto::step_shape(mb.batch, spec_.parallel.tp);
  ++in_flight_;
  if (spec_.parallel.pp == 1) {
    run_stage(mb, 0);
    return;
  }
  kernels::decompose_stages(spec_.model, mb.batch, spec_.weight_dtype, spec_.kv_dtype, spec_.parallel, mb.stages,
                            &stage_chunks_);
  stage_inbox_.front()->put({&mb, sc_core::sc_time_stamp()});
}

// One stage's work on a batch. A multi-step batch: the host prepares once and processes the
// outputs once; in between, the GPU runs one pass after another with every context one token
// longer.
proto::HostPhases Replica::host_phases(const proto::StepShape& shape, bool prepare, bool finish) const {
  proto::HostPhases phases;
  if (overheads_ == nullptr) return phases;
  if (prepare) phases.prepare_s = overheads_->before_gpu_seconds(shape);
  if (finish) phases.finish_s = overheads_->after_gpu_seconds(shape);
  return phases;
}

void Replica::run_stage(MicroBatch& mb, int stage) {
  if (spec_decode_) {  // pp = 1 only (set_speculative)
    speculative_step(mb);
    return;
  }
  const int pp = spec_.parallel.pp;
  proto::StepExecutor& host = *hosts_[static_cast<std::size_t>(stage)];
  for (int pass = 0; pass < mb.plan.steps; ++pass) {
    if (pass > 0)
      for (std::int64_t& context : mb.batch.decode_contexts) ++context;
    const kernels::StepKernels& kernels =
        pp == 1 ? decomposer_.decompose(mb.batch) : mb.stages[static_cast<std::size_t>(stage)];
    const proto::HostPhases phases = host_phases(mb.shape, stage == 0 && pass == 0, stage == pp - 1 && pass == mb.plan.steps - 1);
    account(host.execute_step(kernels, mb.shape, mb.step + static_cast<std::uint64_t>(pass), &mb.request_ids, phases));
  }
}

void Replica::retire(MicroBatch& mb) {
  --in_flight_;
  for (const ScheduledSequence& s : mb.plan.sequences) s.request->in_flight = false;
  finish_step(mb.plan);
}

void Replica::stage_loop(int stage) {
  const int pp = spec_.parallel.pp;
  for (;;) {
    const Handover in = stage_inbox_[static_cast<std::size_t>(stage)]->get();
    if (in.arrival > sc_core::sc_time_stamp()) env_.hold(in.arrival - sc_core::sc_time_stamp());
    MicroBatch& mb = *in.batch;
    run_stage(mb, stage);
    if (stage == pp - 1) {
      done_->put(&mb);
      continue;
    }
    const kernels::Phase phase = mb.batch.prefills.empty() ? kernels::Phase::Decode
                                 : mb.batch.decode_contexts.empty() ? kernels::Phase::Prefill
                                                                    : kernels::Phase::Mixed;
    const double bytes =
        kernels::pp_send_bytes(spec_.model, mb.batch.num_tokens(), spec_.weight_dtype, spec_.parallel.tp);
    const sc_core::sc_time arrival = links_[static_cast<std::size_t>(stage)]->send(bytes, phase, mb.step);
    stage_inbox_[static_cast<std::size_t>(stage) + 1]->put({&mb, arrival});
  }
}


// vLLM's order within one engine step is: target forward (verification), rejection sampling,
// then the proposer for the next step; here the proposer's passes for this step's drafts run
// first, which prices the same work. The proposer: a draft model or an EAGLE/MTP head runs
// one pass over the step's prefill chunks (its own KV of the prompt) and the decodes' last
// tokens, then one pass per further draft position over the decodes that still draft; n-gram
// prompt lookup costs CPU time per drafting sequence. Then the target verifies 1 + drafts
// tokens per decode in one forward pass.
void Replica::speculative_step(MicroBatch& mb) {
  const SpecDecodeConfig& sd = *spec_decode_;
  const std::uint64_t step_id = mb.step;
  proto::StepExecutor& host = *hosts_.front();
  bool prepared = false;
  std::int64_t max_drafts = 0, drafting = 0;
  for (const std::int64_t d : mb.decode_drafts) {
    max_drafts = std::max(max_drafts, d);
    drafting += d > 0 ? 1 : 0;
  }
  if (sd.method == SpecMethod::Ngram) {
    if (drafting > 0) {
      const double cpu_s = static_cast<double>(drafting) * sd.ngram_seconds_per_sequence;
      env_.hold(sim::seconds(cpu_s));
      stats_.spec_proposer_cpu_s += cpu_s;
      stats_.host_s += cpu_s;
      stats_.busy_s += cpu_s;
    }
  } else {
    for (std::int64_t pass = 0; pass < std::max<std::int64_t>(max_drafts, 1); ++pass) {
      draft_batch_.prefills.clear();
      draft_batch_.decode_contexts.clear();
      if (pass == 0) draft_batch_.prefills = mb.batch.prefills;
      for (std::size_t i = 0; i < mb.batch.decode_contexts.size(); ++i)
        if (mb.decode_drafts[i] > pass) draft_batch_.decode_contexts.push_back(mb.batch.decode_contexts[i] + pass);
      if (draft_batch_.empty()) break;
      draft_kernels_ = draft_decomposer_->decompose(draft_batch_);  // "draft_" kernels
      if (sd.head_fc && !draft_kernels_.per_layer.empty()) {
        // EAGLE / MTP: the fusion of token embedding and target hidden state, [2h -> h],
        // replicated on every TP rank (vLLM's llama_eagle.py: nn.Linear).
        const kernels::DType act = kernels::activation_dtype(spec_.weight_dtype);
        kernels::Kernel fc = kernels::make_gemm("draft_fc", draft_batch_.num_tokens(), sd.draft.hidden_size,
                                                2 * static_cast<std::int64_t>(sd.draft.hidden_size),
                                                kernels::gemm_compute_dtype(spec_.weight_dtype),
                                                kernels::dtype_bytes(act), kernels::dtype_bytes(spec_.weight_dtype));
        fc.phase = draft_kernels_.per_layer.front().phase;
        draft_kernels_.pre.append(draft_fc_chunks_.make(&fc, &fc + 1));
      }
      const proto::StepShape draft_shape = proto::step_shape(draft_batch_, spec_.parallel.tp);
      account(host.execute_step(draft_kernels_, draft_shape, step_id, &mb.request_ids,
                                 host_phases(draft_shape, !prepared, false)));
      prepared = true;
      ++stats_.spec_draft_passes;
    }
  }
  const kernels::StepKernels& verify = decomposer_.decompose(mb.batch, &mb.decode_queries);
  proto::StepShape shape = proto::step_shape(mb.batch, spec_.parallel.tp);
  for (const std::int64_t d : mb.decode_drafts) shape.tokens += d;
  account(host.execute_step(verify, shape, step_id, &mb.request_ids, host_phases(shape, !prepared, true)));
}

void Replica::account(const proto::StepTiming& timing) {
  stats_.kernels += timing.kernels;
  stats_.busy_s += sim::to_seconds(timing.total);
  stats_.host_s += sim::to_seconds(timing.host_before + timing.host_after);
  stats_.gpu_wait_s += sim::to_seconds(timing.gpu_wait);
}

// The step's tokens are out: progress, metrics, finished requests.
void Replica::finish_step(const StepPlan& plan) {
  // The clock does not move while a step retires: read once (a library call each time).
  const double usage = kv_->usage(), now = env_.now_seconds();  // held since the last batch ended
  stats_.kv_usage_seconds += usage * (now - stats_.kv_last_s);
  stats_.kv_usage_peak = std::max(stats_.kv_usage_peak, usage);
  stats_.kv_last_s = now;
  ++stats_.batches;
  stats_.batched_sequences += plan.sequences.size();
  StepOutcome& outcome = outcome_;
  scheduler_->complete(plan, now, outcome);
  if (spec_decode_) {
    stats_.spec_verified += outcome.spec_verified;
    stats_.spec_draft_tokens += outcome.spec_draft_tokens;
    stats_.spec_accepted += outcome.spec_accepted;
    for (std::size_t i = 0; i < outcome.spec_accepted_at.size(); ++i) stats_.spec_accepted_at[i] += outcome.spec_accepted_at[i];
  }
  metrics_.record(outcome, now);
  if (trace_ != nullptr) trace_step(outcome);
  outstanding_ -= outcome.finished.size();
  if (on_finish_)
    for (Request* r : outcome.finished) on_finish_(*r);
}

namespace {
std::uint64_t ps(double seconds) { return seconds > 0 ? static_cast<std::uint64_t>(std::llround(seconds * 1e12)) : 0; }
}  // namespace

void Replica::trace_step(const StepOutcome& outcome) {
  const std::uint64_t now = ps(env_.now_seconds());
  trace_->counter(trace_track_, "queue", now,
                  {{"running", static_cast<double>(scheduler_->num_running())},
                   {"waiting", static_cast<double>(scheduler_->num_waiting())}});
  trace_->counter(trace_track_, "kv_cache_usage_pct", now, {{"used", 100.0 * kv_->usage()}});
  if (host_link_) {
    const HostKvStats& h = kv_->host_tier()->stats();
    trace_->counter(trace_track_, "host_kv_blocks", now,
                    {{"held", static_cast<double>(kv_->host_tier()->size())},
                     {"loaded", static_cast<double>(h.loaded_blocks)},
                     {"stored", static_cast<double>(h.stored_blocks)}});
  }
  for (const Request* r : outcome.finished) {
    const std::string args = "{\"prompt_tokens\":" + std::to_string(r->prompt_tokens) +
                             ",\"output_tokens\":" + std::to_string(r->generated) +
                             ",\"cached_tokens\":" + std::to_string(std::max<std::int64_t>(0, r->cached_tokens)) +
                             ",\"preemptions\":" + std::to_string(r->preemptions) + "}";
    const std::string name = "request " + std::to_string(r->id);
    trace_->async_span(trace_track_, name, "request", r->id, ps(r->arrival_s), ps(r->finish_s), args,
                       {{"queued", ps(r->arrival_s), ps(r->first_scheduled_s)},
                        {"prefill", ps(r->first_scheduled_s), ps(r->first_token_s)},
                        {"decode", ps(r->first_token_s), ps(r->finish_s)}});
  }
}

}  // namespace ks::serving
