#include "serving/batch_scheduler.hpp"

#include <algorithm>
#include <stdexcept>

namespace ks::serving {

ContinuousBatchingScheduler::ContinuousBatchingScheduler(const SchedulerLimits& limits, KvBlockManager& kv)
    : limits_(limits), kv_(kv) {
  if (limits.max_num_seqs < 1) throw std::invalid_argument("max_num_seqs must be >= 1");
  if (limits.max_num_batched_tokens < 1) throw std::invalid_argument("max_num_batched_tokens must be >= 1");
}

void ContinuousBatchingScheduler::add(Request* request) { waiting_.push_back(request); }

void ContinuousBatchingScheduler::preempt(Request* request, StepPlan& plan) {
  kv_.release(*request);
  request->computed_tokens = 0;  // recompute: prompt and generated tokens are prefilled again
  ++request->preemptions;
  plan.preempted.push_back(request);
  waiting_.push_front(request);
}

StepPlan ContinuousBatchingScheduler::schedule() {
  StepPlan plan;
  std::int64_t budget = limits_.max_num_batched_tokens;

  // 1. Running requests, oldest first. Preempt from the back when KV blocks run out.
  std::deque<Request*> kept;
  while (!running_.empty() && budget > 0) {
    Request* r = running_.front();
    running_.pop_front();
    const std::int64_t tokens = std::min(tokens_to_compute(*r), budget);
    bool placed = false;
    while (!placed) {
      if (kv_.reserve(*r, r->computed_tokens + tokens)) {
        placed = true;
      } else if (!running_.empty()) {
        Request* victim = running_.back();
        running_.pop_back();
        preempt(victim, plan);
      } else {
        break;  // nothing left to evict but this request itself
      }
    }
    if (!placed) {
      preempt(r, plan);
      continue;
    }
    plan.sequences.push_back({r, tokens, r->computed_tokens});
    budget -= tokens;
    kept.push_back(r);
  }
  // Requests not reached for lack of budget stay running, after the scheduled ones.
  for (Request* r : running_) kept.push_back(r);
  running_.swap(kept);

  // 2. Waiting requests, FIFO, while there is budget, a sequence slot and KV room. Not in a
  //    step that had to preempt: memory is short, admitting more would only thrash (as vLLM v1),
  //    unless the preemptions emptied the batch.
  while ((plan.preempted.empty() || plan.sequences.empty()) && !waiting_.empty() && budget > 0 &&
         static_cast<std::int64_t>(running_.size()) < limits_.max_num_seqs) {
    Request* r = waiting_.front();
    std::int64_t tokens = tokens_to_compute(*r);
    if (tokens > budget) {
      if (!limits_.chunked_prefill) {
        if (tokens > limits_.max_num_batched_tokens)
          throw std::logic_error("without chunked prefill a sequence of " + std::to_string(tokens) +
                                 " tokens can never fit max_num_batched_tokens = " +
                                 std::to_string(limits_.max_num_batched_tokens));
        break;
      }
      tokens = budget;
    }
    if (!kv_.reserve(*r, r->computed_tokens + tokens)) break;
    waiting_.pop_front();
    plan.sequences.push_back({r, tokens, r->computed_tokens});
    budget -= tokens;
    running_.push_back(r);
  }
  plan.num_tokens = limits_.max_num_batched_tokens - budget;
  return plan;
}

StepOutcome ContinuousBatchingScheduler::complete(const StepPlan& plan, double now_s) {
  StepOutcome outcome;
  for (const ScheduledSequence& s : plan.sequences) {
    Request* r = s.request;
    r->computed_tokens += s.tokens;
    if (r->computed_tokens < r->sequence_length()) continue;  // a prefill chunk, not the last
    // The step's logits for this sequence yield one token.
    ++r->generated;
    if (r->first_token_s < 0) r->first_token_s = now_s;
    outcome.emitted.push_back({r, r->last_token_s});
    r->last_token_s = now_s;
    if (r->finished()) {
      r->finish_s = now_s;
      kv_.release(*r);
      outcome.finished.push_back(r);
    }
  }
  if (!outcome.finished.empty()) {
    running_.erase(std::remove_if(running_.begin(), running_.end(), [](Request* r) { return r->finished(); }),
                   running_.end());
  }
  return outcome;
}

namespace {
const bool registered = [] {
  config::Schema schema("Continuous batching with chunked prefill under a token budget, as in vLLM v1.");
  schema.integer("max_num_seqs", 256, "most sequences in one step", 1)
      .integer("max_num_batched_tokens", 8192, "token budget of one step", 1)
      .flag("enable_chunked_prefill", true, "split long prompts over several steps to fit the budget");
  scheduler_registry().add(
      "vllm_v1", {schema.doc(), schema, [](const SchedulerArgs& args) -> std::unique_ptr<BatchScheduler> {
                    SchedulerLimits limits;
                    limits.max_num_seqs = args.params.integer("max_num_seqs");
                    limits.max_num_batched_tokens = args.params.integer("max_num_batched_tokens");
                    limits.chunked_prefill = args.params.flag("enable_chunked_prefill");
                    return std::make_unique<ContinuousBatchingScheduler>(limits, *args.kv);
                  }});
  return true;
}();
}  // namespace

}  // namespace ks::serving
