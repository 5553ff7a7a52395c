#include "serving/replica.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/step_decomposer.hpp"

namespace ks::serving {

Replica::Replica(sim::Environment& env, ReplicaSpec spec, hw::HostCpu& host, std::unique_ptr<KvBlockManager> kv,
                 std::unique_ptr<BatchScheduler> scheduler, MetricsRecorder& metrics)
    : env_(env),
      spec_(std::move(spec)),
      host_(host),
      kv_(std::move(kv)),
      scheduler_(std::move(scheduler)),
      metrics_(metrics),
      inbox_(env) {
  env_.process([this] { engine_loop(); }, spec_.name + ".engine");
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

kernels::StepBatch Replica::to_batch(const StepPlan& plan) {
  kernels::StepBatch batch;
  batch.decode_contexts.reserve(plan.sequences.size());
  batch_ids_.clear();
  for (const ScheduledSequence& s : plan.sequences) {
    const Request& r = *s.request;
    batch_ids_.push_back(r.id);
    const bool decode = s.tokens == 1 && r.generated > 0 && s.cached_before == r.sequence_length() - 1;
    if (decode) {
      batch.decode_contexts.push_back(s.cached_before + 1);
    } else {
      const bool last = s.cached_before + s.tokens == r.sequence_length();
      batch.prefills.push_back({s.tokens, s.cached_before, last});
    }
  }
  return batch;
}

void Replica::engine_loop() {
  for (;;) {
    if (!scheduler_->has_work()) scheduler_->add(inbox_.get());  // idle: sleep until a request
    while (auto r = inbox_.try_get()) scheduler_->add(*r);

    const StepPlan plan = scheduler_->schedule();
    if (plan.empty())
      throw std::runtime_error("replica '" + spec_.name + "' cannot schedule any request (KV cache of " +
                               std::to_string(kv_->num_blocks()) + " blocks)");
    stats_.preemptions += plan.preempted.size();
    for (const ScheduledSequence& s : plan.sequences)
      if (s.request->first_scheduled_s < 0) s.request->first_scheduled_s = env_.now_seconds();

    const kernels::StepBatch batch = to_batch(plan);
    kernels::decompose_step(spec_.model, batch, spec_.weight_dtype, spec_.kv_dtype, spec_.parallel, kernels_);
    const hw::StepTiming timing =
        host_.execute_step(kernels_, hw::step_shape(batch, spec_.parallel.tp), stats_.steps, &batch_ids_);

    ++stats_.steps;
    stats_.kernels += timing.kernels;
    stats_.busy_s += sim::to_seconds(timing.total);
    stats_.host_s += sim::to_seconds(timing.host_before + timing.host_after);
    stats_.gpu_wait_s += sim::to_seconds(timing.gpu_wait);

    const StepOutcome outcome = scheduler_->complete(plan, env_.now_seconds());
    metrics_.record(outcome, env_.now_seconds());
    if (trace_ != nullptr) trace_step(outcome);
    outstanding_ -= outcome.finished.size();
    if (on_finish_)
      for (Request* r : outcome.finished) on_finish_(*r);
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
