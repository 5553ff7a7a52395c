#include "serving/request_source.hpp"

#include <stdexcept>
#include <utility>

namespace ks::serving {
namespace {

// A request longer than a replica's whole KV cache can never run: a workload error, reported
// with the numbers (the replica's own check would be an internal failure).
void check_fits(const Request& r, const Replica& replica, const config::SourceMark& mark,
                const std::string& cache_key) {
  const BatchScheduler& scheduler = replica.scheduler();
  const std::int64_t whole = scheduler.whole_step_tokens(r);
  if (whole > scheduler.max_num_batched_tokens())
    throw config::ConfigError(mark, "workload",
                              "request " + std::to_string(r.id) + " has " + std::to_string(r.prompt_tokens) +
                                  " prompt + " + std::to_string(r.output_tokens) + " output tokens: without chunked "
                                  "prefill one step must hold " + std::to_string(whole) +
                                  " of them (a prompt, or a preempted request's recompute), but "
                                  "engine.max_num_batched_tokens is " +
                                  std::to_string(scheduler.max_num_batched_tokens()) +
                                  ": raise it (vLLM: >= max_model_len), cap the lengths or enable chunked prefill");
  const KvBlockManager& kv = replica.kv();
  const std::int64_t needed = kv.blocks_for(r.prompt_tokens + r.output_tokens);
  if (needed <= kv.num_blocks()) return;
  throw config::ConfigError(mark, "workload",
                            "request " + std::to_string(r.id) + " has " + std::to_string(r.prompt_tokens) +
                                " prompt + " + std::to_string(r.output_tokens) + " output tokens and needs " +
                                std::to_string(needed) + " KV blocks, but a replica's KV cache holds " +
                                std::to_string(kv.num_blocks()) + " (" +
                                std::to_string(kv.num_blocks() * kv.block_size()) +
                                " tokens): shorten the requests or give the model more memory (GPU memory, "
                                "parallel.tp, " + cache_key + ")");
}

}  // namespace

RequestSource::RequestSource(sim::Environment& env, Workload& workload, RequestSourceSettings settings,
                             std::vector<Replica*> replicas, Router* router, std::function<void(Request*)> submit)
    : env_(env),
      workload_(workload),
      settings_(std::move(settings)),
      replicas_(std::move(replicas)),
      router_(router),
      submit_(std::move(submit)) {
  if (const auto n = static_cast<double>(workload_.max_concurrency()); n > 0)
    free_slots_ = std::make_unique<sim::Container>(env_, n, n);
  env_.process([this] { loop(); }, "request_source");
}

void RequestSource::finished() {
  if (!free_slots_) return;
  if (free_slots_->level() >= free_slots_->capacity())
    throw std::logic_error("request_source: a request finished that held no client slot");
  free_slots_->put(1);
}

void RequestSource::loop() {
  std::vector<ReplicaLoad> loads(replicas_.size());
  const bool closed_loop = free_slots_ != nullptr;
  bool holding_slot = false;  // taken for the next request (kept when that one is rejected)
  for (;;) {
    if (closed_loop && !holding_slot) {  // wait for a free slot, then send at once
      if (!free_slots_->try_get(1)) free_slots_->get(1);
      holding_slot = true;
      if (workload_.duration_s() > 0 && env_.now_seconds() > workload_.duration_s()) break;
    }
    auto spec = workload_.next();
    if (!spec) break;
    // As vLLM's OpenAI server: a request whose prompt + max_tokens exceed the context length is
    // rejected. A trace's are counted; a generated workload's lengths are the scenario's choice
    // (an error, after the KV-capacity check so that a request too long for both names memory).
    const bool too_long = spec->prompt_tokens + spec->output_tokens > settings_.max_model_len;
    if (too_long && settings_.reject_long_requests) {
      ++context_rejected_;
      continue;
    }
    if (!closed_loop) {
      const double wait = spec->arrival_s - env_.now_seconds();
      if (wait > 0) env_.hold(sim::seconds(wait));
    }
    Request& r = requests_.emplace_back();
    r.id = static_cast<std::uint64_t>(submitted_++);
    r.arrival_s = env_.now_seconds();
    r.prompt_tokens = spec->prompt_tokens;
    r.output_tokens = spec->output_tokens;
    r.prefix_group = spec->prefix_group;
    r.group_tokens = spec->group_tokens;
    r.prompt_ids = spec->prompt_ids;
    if (submit_) {  // disaggregation: the coordinator routes it through both pools
      check_fits(r, *replicas_.back(), settings_.workload_mark, settings_.kv_sizing_key);  // a decode replica holds it whole
      if (too_long)
        throw config::ConfigError(settings_.workload_mark, "workload",
                                  "request " + std::to_string(r.id) + " is longer than the context length " +
                                      std::to_string(settings_.max_model_len) + ": cap the workload's lengths");
      submit_(&r);
      holding_slot = false;
      continue;
    }
    for (std::size_t i = 0; i < replicas_.size(); ++i) loads[i].outstanding = replicas_[i]->outstanding();
    const std::size_t target = router_->route(r, loads);
    check_fits(r, *replicas_.at(target), settings_.workload_mark, settings_.kv_sizing_key);
    if (too_long)
      throw config::ConfigError(
          settings_.workload_mark, "workload",
          "request " + std::to_string(r.id) + " has " + std::to_string(r.prompt_tokens) + " prompt + " +
              std::to_string(r.output_tokens) + " output tokens = " + std::to_string(r.prompt_tokens + r.output_tokens) +
              ", longer than the context length " + std::to_string(settings_.max_model_len) + " (" +
              (settings_.max_model_len_given ? "engine.max_model_len" : "the model's max_position_embeddings") +
              "): cap the workload's lengths (e.g. prompt_max / output_max) or use a longer-context model");
    r.replica = static_cast<std::int64_t>(target);
    replicas_.at(target)->submit(&r);
    holding_slot = false;
  }
}

}  // namespace ks::serving
