#include "serving/replica.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/step_decomposer.hpp"

namespace ks::serving {

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
      host_(*hosts_.at(0)),
      kv_(std::move(kv)),
      scheduler_(std::move(scheduler)),
      metrics_(metrics),
      inbox_(env),
      decomposer_(spec_.model, spec_.weight_dtype, spec_.kv_dtype, spec_.parallel) {
  const int pp = spec_.parallel.pp;
  if (static_cast<int>(hosts_.size()) != pp || static_cast<int>(links_.size()) != pp - 1)
    throw std::invalid_argument("replica '" + spec_.name + "': pp=" + std::to_string(pp) + " needs " +
                                std::to_string(pp) + " stage hosts and " + std::to_string(pp - 1) + " links");
  if (pp == 1) {
    env_.process([this] { engine_loop(); }, spec_.name + ".engine");
    return;
  }
  for (int s = 0; s < pp; ++s) {
    slots_.push_back(std::make_unique<MicroBatch>());
    stage_inbox_.push_back(std::make_unique<sim::Store<Handover>>(env_));
  }
  done_ = std::make_unique<sim::Store<MicroBatch*>>(env_);
  env_.process([this] { pipeline_loop(); }, spec_.name + ".engine");
  for (int s = 0; s < pp; ++s) env_.process([this, s] { stage_loop(s); }, spec_.name + ".stage" + std::to_string(s));
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

void Replica::to_batch(const StepPlan& plan, kernels::StepBatch& batch, std::vector<std::uint64_t>& ids) {
  batch.prefills.clear();  // refilled in place: no allocation per step
  batch.decode_contexts.clear();
  ids.clear();
  batch.decode_contexts.reserve(plan.sequences.size());
  for (const ScheduledSequence& s : plan.sequences) {
    const Request& r = *s.request;
    ids.push_back(r.id);
    const bool decode = s.tokens == 1 && r.generated > 0 && s.cached_before == r.sequence_length() - 1;
    if (decode) {
      batch.decode_contexts.push_back(s.cached_before + 1);
    } else {
      const bool last = s.cached_before + s.tokens == r.sequence_length();
      batch.prefills.push_back({s.tokens, s.cached_before, last});
    }
  }
}

void Replica::engine_loop() {
  for (;;) {
    if (!scheduler_->has_work()) scheduler_->add(inbox_.get());  // idle: sleep until a request
    while (auto r = inbox_.try_get()) scheduler_->add(*r);

    StepPlan& plan = plan_;
    scheduler_->schedule(plan);
    if (plan.empty())
      throw std::runtime_error("replica '" + spec_.name + "' cannot schedule any request (KV cache of " +
                               std::to_string(kv_->num_blocks()) + " blocks)");
    stats_.preemptions += plan.preempted.size();
    for (const ScheduledSequence& s : plan.sequences)
      if (s.request->first_scheduled_s < 0) s.request->first_scheduled_s = env_.now_seconds();

    to_batch(plan, batch_, batch_ids_);
    // A multi-step batch: the host prepares once and processes the outputs once; in between, the
    // GPU runs one pass after another with every context one token longer.
    for (int pass = 0; pass < plan.steps; ++pass) {
      if (pass > 0)
        for (std::int64_t& context : batch_.decode_contexts) ++context;
      const kernels::StepKernels& step = decomposer_.decompose(batch_);
      const proto::HostPhases phases{pass == 0, pass == plan.steps - 1};
      account(host_.execute_step(step, proto::step_shape(batch_, spec_.parallel.tp), stats_.steps, &batch_ids_, phases));
      ++stats_.steps;
    }
    finish_step(plan);
  }
}

void Replica::account(const proto::StepTiming& timing) {
  stats_.kernels += timing.kernels;
  stats_.busy_s += sim::to_seconds(timing.total);
  stats_.host_s += sim::to_seconds(timing.host_before + timing.host_after);
  stats_.gpu_wait_s += sim::to_seconds(timing.gpu_wait);
}

// The step's tokens are out: progress, metrics, finished requests.
void Replica::finish_step(const StepPlan& plan) {
  StepOutcome& outcome = outcome_;
  scheduler_->complete(plan, env_.now_seconds(), outcome);
  metrics_.record(outcome, env_.now_seconds());
  if (trace_ != nullptr) trace_step(outcome);
  outstanding_ -= outcome.finished.size();
  if (on_finish_)
    for (Request* r : outcome.finished) on_finish_(*r);
}

// vLLM v1's step_with_batch_queue: schedule while the queue has room and something can be
// scheduled; otherwise block on the oldest in-flight batch.
void Replica::pipeline_loop() {
  const int pp = spec_.parallel.pp;
  for (;;) {
    if (in_flight_ == 0 && !scheduler_->has_work()) scheduler_->add(inbox_.get());  // idle
    while (auto r = inbox_.try_get()) scheduler_->add(*r);
    bool scheduled = false;
    if (in_flight_ < pp) {
      StepPlan plan = scheduler_->schedule();
      if (plan.steps > 1)  // the scenario check rejects this; a library user gets told here
        throw std::logic_error("replica '" + spec_.name + "': multi-step scheduling with pipeline parallelism is not modelled");
      stats_.preemptions += plan.preempted.size();
      if (!plan.empty()) {
        dispatch(std::move(plan));
        scheduled = true;
      } else if (in_flight_ == 0) {
        throw std::runtime_error("replica '" + spec_.name + "' cannot schedule any request (KV cache of " +
                                 std::to_string(kv_->num_blocks()) + " blocks)");
      }
    }
    if (!scheduled) retire(*done_->get());
  }
}

void Replica::dispatch(StepPlan plan) {
  MicroBatch& mb = *slots_[stats_.steps % slots_.size()];  // batches retire in order
  mb.plan = std::move(plan);
  mb.step = stats_.steps++;
  for (const ScheduledSequence& s : mb.plan.sequences) {
    s.request->in_flight = true;
    if (s.request->first_scheduled_s < 0) s.request->first_scheduled_s = env_.now_seconds();
  }
  to_batch(mb.plan, mb.batch, mb.request_ids);
  kernels::decompose_stages(spec_.model, mb.batch, spec_.weight_dtype, spec_.kv_dtype, spec_.parallel, mb.stages);
  mb.shape = proto::step_shape(mb.batch, spec_.parallel.tp);
  ++in_flight_;
  stage_inbox_.front()->put({&mb, sc_core::sc_time_stamp()});
}

void Replica::retire(MicroBatch& mb) {
  --in_flight_;
  for (const ScheduledSequence& s : mb.plan.sequences) s.request->in_flight = false;
  finish_step(mb.plan);
}

void Replica::stage_loop(int stage) {
  const int pp = spec_.parallel.pp;
  const proto::HostPhases phases{stage == 0, stage == pp - 1};
  for (;;) {
    const Handover in = stage_inbox_[static_cast<std::size_t>(stage)]->get();
    if (in.arrival > sc_core::sc_time_stamp()) env_.hold(in.arrival - sc_core::sc_time_stamp());
    MicroBatch& mb = *in.batch;
    account(hosts_[static_cast<std::size_t>(stage)]->execute_step(mb.stages[static_cast<std::size_t>(stage)], mb.shape,
                                                                  mb.step, &mb.request_ids, phases));
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

namespace {
std::uint64_t ps(double seconds) { return seconds > 0 ? static_cast<std::uint64_t>(std::llround(seconds * 1e12)) : 0; }
}  // namespace

void Replica::trace_step(const StepOutcome& outcome) {
  const std::uint64_t now = ps(env_.now_seconds());
  trace_->counter(trace_track_, "queue", now,
                  {{"running", static_cast<double>(scheduler_->num_running())},
                   {"waiting", static_cast<double>(scheduler_->num_waiting())}});
  trace_->counter(trace_track_, "kv_cache_usage_pct", now, {{"used", 100.0 * kv_->usage()}});
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
