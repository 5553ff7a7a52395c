#include "serving/batch_scheduler.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace ks::serving {

ContinuousBatchingScheduler::ContinuousBatchingScheduler(const SchedulerLimits& limits, KvBlockManager& kv)
    : limits_(limits), kv_(kv) {
  if (limits.max_num_seqs < 1) throw std::invalid_argument("max_num_seqs must be >= 1");
  if (limits.max_num_batched_tokens < 1) throw std::invalid_argument("max_num_batched_tokens must be >= 1");
  if (limits.multi_step < 1) throw std::invalid_argument("multi_step must be >= 1");
  if (limits.multi_step > 1 && limits.chunked_prefill)
    throw std::invalid_argument("multi-step scheduling with chunked prefill is not modelled");
}

// A request that already holds KV blocks arrives with its KV in place (prefill/decode
// disaggregation: the prefill's KV was copied into them, serving/pd_coordinator.hpp): it joins
// the running requests as a decode. Any other request waits for admission.
void ContinuousBatchingScheduler::add(Request* request) {
  if (!request->block_table.empty()) running_.push_back(request);
  else waiting_.push_back(request);
}

void ContinuousBatchingScheduler::set_speculative(int k, AcceptDrafts accept) {
  if (k < 1) throw std::invalid_argument("speculative decoding needs k >= 1 drafts, got " + std::to_string(k));
  if (limits_.multi_step > 1)
    throw std::invalid_argument("speculative decoding with multi-step scheduling is not modelled");
  if (!accept) throw std::invalid_argument("speculative decoding needs an acceptance function");
  spec_k_ = k;
  accept_ = std::move(accept);
}

void ContinuousBatchingScheduler::preempt(Request* request, StepPlan& plan) {
  kv_.release(*request);
  request->computed_tokens = 0;  // recompute: prompt and generated tokens are prefilled again
  ++request->preemptions;
  plan.preempted.push_back(request);
  waiting_.push_front(request);
}

Request* ContinuousBatchingScheduler::take_victim(std::size_t from) {
  // The most recently admitted request not in flight (freeing an in-flight request's blocks
  // would pull its KV from under a step still computing it).
  for (std::size_t i = running_.size(); i-- > from;) {
    if (running_[i]->in_flight) continue;
    Request* victim = running_[i];
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
    return victim;
  }
  return nullptr;
}

void ContinuousBatchingScheduler::schedule_running(StepPlan& plan, std::int64_t& budget) {
  // Oldest first (Sarathi: decodes before unfinished prefills). Preempt from the back of the
  // running queue when KV blocks run out.
  if (limits_.decode_first)
    std::stable_partition(running_.begin(), running_.end(), [this](const Request* r) { return tokens_to_compute(*r) == 1; });
  std::vector<Request*>& kept = kept_;  // reused: no allocation per step
  kept.clear();
  bool any_in_flight = false;
  std::size_t next = 0;  // running_[next, end) not reached yet
  while (next < running_.size() && budget > 0) {
    Request* r = running_[next++];
    if (r->in_flight) {  // its previous step is still in the pipeline
      any_in_flight = true;
      kept.push_back(r);
      continue;
    }
    std::int64_t tokens = std::min(tokens_to_compute(*r), budget);
    // A speculative decode verifies its drafts in the same pass (no more than it can still emit).
    if (spec_k_ > 0 && tokens == 1 && r->generated > 0)
      tokens += std::max<std::int64_t>(
          0, std::min({static_cast<std::int64_t>(spec_k_), r->output_tokens - r->generated - 1, budget - 1}));
    std::int64_t room = r->computed_tokens + tokens;
    // A decode in a multi-step batch needs room for every pass's token (vLLM's lookahead slots),
    // up to the sequence's last one.
    if (limits_.multi_step > 1 && tokens == 1 && r->generated > 0)
      room = std::max(room, std::min(r->computed_tokens + limits_.multi_step, r->prompt_tokens + r->output_tokens - 1));
    bool placed = false;
    while (!placed) {
      if (kv_.reserve(*r, room)) {
        placed = true;
      } else if (Request* victim = take_victim(next)) {
        preempt(victim, plan);
      } else {
        break;  // nothing left to evict but this request itself
      }
    }
    if (!placed && (any_in_flight || std::any_of(running_.begin() + static_cast<std::ptrdiff_t>(next), running_.end(),
                                                 [](const Request* q) {
                      return q->in_flight;
                    }))) {
      kept.push_back(r);  // in-flight steps will free or commit blocks: wait for them
      continue;
    }
    if (!placed) {
      preempt(r, plan);
      continue;
    }
    ScheduledSequence& s = plan.sequences.emplace_back();  // in place, as complete() stores tokens
    s.request = r;
    s.tokens = tokens;
    s.cached_before = r->computed_tokens;
    budget -= tokens;
    kept.push_back(r);
  }
  // Requests not reached for lack of budget stay running, after the scheduled ones.
  kept.insert(kept.end(), running_.begin() + static_cast<std::ptrdiff_t>(next), running_.end());
  running_.swap(kept);
}

void ContinuousBatchingScheduler::admit_waiting(StepPlan& plan, std::int64_t& budget) {
  // Not in a step that had to preempt: memory is short, admitting more would only thrash (as
  // vLLM v1), unless the preemptions emptied the batch. A static batch admits only when empty.
  if (!plan.preempted.empty() && !plan.sequences.empty()) return;
  if (limits_.static_batch && !running_.empty()) return;
  while (!waiting_.empty() && budget > 0 && static_cast<std::int64_t>(running_.size()) < limits_.max_num_seqs) {
    Request* r = waiting_.front();  // new or preempted: holds no KV blocks
    const std::int64_t hit = kv_.cached_prefix(*r);
    std::int64_t tokens = r->sequence_length() - hit;
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
    const std::int64_t reserve = limits_.reserve_full ? r->prompt_tokens + r->output_tokens : hit + tokens;
    if (!kv_.allocate(*r, hit, reserve)) break;
    waiting_.pop_front();
    r->computed_tokens = hit;
    if (r->cached_tokens < 0) r->cached_tokens = hit;
    plan.sequences.push_back({r, tokens, hit});
    budget -= tokens;
    running_.push_back(r);
  }
}

void ContinuousBatchingScheduler::schedule(StepPlan& plan) {
  plan.sequences.clear();
  plan.preempted.clear();
  plan.sequences.reserve(std::min(running_.size() + waiting_.size(), static_cast<std::size_t>(limits_.max_num_seqs)));
  std::int64_t budget = limits_.max_num_batched_tokens;
  plan.steps = 1;
  bool admitted = false;
  if (limits_.prefill_first) {
    admit_waiting(plan, budget);  // the step is prompts only if any could be admitted
    admitted = !plan.empty();
    if (!admitted) schedule_running(plan, budget);
  } else {
    schedule_running(plan, budget);
    const std::size_t running = plan.sequences.size();
    admit_waiting(plan, budget);
    admitted = plan.sequences.size() > running;
  }
  plan.num_tokens = limits_.max_num_batched_tokens - budget;
  // Multi-step only for running decodes: a request admitted this step is a prefill, even one
  // readmitted from its own cached blocks with a single token left to compute (vLLM gives
  // prefills no lookahead slots).
  if (limits_.multi_step > 1 && !admitted && !plan.empty() &&
      std::all_of(plan.sequences.begin(), plan.sequences.end(), [](const ScheduledSequence& s) {
        return s.tokens == 1 && s.request->generated > 0;
      }))
    plan.steps = limits_.multi_step;
}

void ContinuousBatchingScheduler::complete(const StepPlan& plan, double now_s, StepOutcome& outcome) {
  outcome.emitted.clear();
  outcome.finished.clear();
  outcome.emitted.reserve(plan.sequences.size());
  if (spec_k_ > 0) {
    outcome.spec_verified = outcome.spec_draft_tokens = outcome.spec_accepted = 0;
    outcome.spec_accepted_at.assign(static_cast<std::size_t>(spec_k_), 0);
  }
  for (const ScheduledSequence& s : plan.sequences) {
    Request* r = s.request;
    // Each pass of a multi-step batch yields a token; passes past the request's last token ran
    // (the batch keeps its shape) but their tokens are dropped.
    std::int64_t passes = std::min<std::int64_t>(plan.steps, r->output_tokens - r->generated);
    std::int64_t computed = s.tokens + (passes - 1);
    // A speculative decode: its last token and `drafts` drafts were verified; the accepted
    // drafts and the bonus token come out, the rejected drafts' KV goes.
    const std::int64_t drafts = r->generated > 0 && s.cached_before == r->sequence_length() - 1 ? s.tokens - 1 : 0;
    if (drafts > 0) {
      const std::int64_t accepted = accept_(drafts);
      if (accepted < 0 || accepted > drafts)
        throw std::logic_error("accepted drafts " + std::to_string(accepted) + " outside [0, " + std::to_string(drafts) + "]");
      ++outcome.spec_verified;
      outcome.spec_draft_tokens += drafts;
      outcome.spec_accepted += accepted;
      for (std::int64_t i = 0; i < accepted; ++i) ++outcome.spec_accepted_at[static_cast<std::size_t>(i)];
      passes = accepted + 1;
      computed = accepted + 1;
    }
    r->computed_tokens += computed;
    if (drafts > 0) kv_.shrink(*r, r->computed_tokens);
    kv_.commit(*r);  // its full blocks become reusable by later requests with the same prefix
    if (r->computed_tokens < r->sequence_length()) continue;  // a prefill chunk, not the last
    // The step's logits for this sequence yield one token (one per pass when multi-step).
    r->generated += passes;
    if (r->first_token_s < 0) r->first_token_s = now_s;
    // Stored field by field: a braced temporary is built on the stack and reloaded as one 16-byte
    // load over two 8-byte stores, which the CPU cannot forward (a stall per emitted token).
    EmittedToken& token = outcome.emitted.emplace_back();
    token.request = r;
    token.previous_token_s = r->last_token_s;
    r->last_token_s = now_s;
    if (r->finished()) {
      r->finish_s = now_s;
      kv_.release(*r);
      r->drop_working_state();
      outcome.finished.push_back(r);
    }
  }
  if (!outcome.finished.empty()) {
    running_.erase(std::remove_if(running_.begin(), running_.end(), [](Request* r) { return r->finished(); }),
                   running_.end());
  }
}

}  // namespace ks::serving
