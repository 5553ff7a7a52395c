#pragma once
// Engine scheduling policies: which requests run in the next step, and how many tokens each.
// Pure classes (no SystemC), so their invariants are tested without a simulation.
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/config/schema.hpp"
#include "base/registry/registry.hpp"
#include "serving/kv_cache.hpp"
#include "serving/request.hpp"

namespace ks::serving {

struct ScheduledSequence {
  Request* request;
  std::int64_t tokens;         // tokens computed for it in this step
  std::int64_t cached_before;  // tokens already in its KV cache
};

struct StepPlan {
  std::vector<ScheduledSequence> sequences;
  std::vector<Request*> preempted;  // evicted to make room (recomputed later)
  std::int64_t num_tokens = 0;
  // Forward passes run on this plan before the scheduler sees the engine again (multi-step
  // scheduling: > 1 only for a batch of decodes). Pass k computes each decode at context
  // cached_before + 1 + k; the tokens of all passes come out together at the end.
  int steps = 1;
  bool empty() const { return sequences.empty(); }
};

struct EmittedToken {
  Request* request;
  double previous_token_s;  // when the request's previous token came out; -1 for its first
};

// Outcome of a finished step.
struct StepOutcome {
  std::vector<EmittedToken> emitted;  // requests that produced one token (or, speculative, a chunk) this step
  std::vector<Request*> finished;     // requests that produced their last token (subset of emitted)
  // Speculative decoding (all zero without it): sequences verified with at least one draft,
  // drafts verified, drafts accepted, and per draft position i the sequences that accepted it.
  std::int64_t spec_verified = 0, spec_draft_tokens = 0, spec_accepted = 0;
  std::vector<std::int64_t> spec_accepted_at;
};

// Speculative decoding's acceptance: how many of `drafts` drafts the target accepts.
using AcceptDrafts = std::function<std::int64_t(std::int64_t drafts)>;

struct SchedulerLimits {
  std::int64_t max_num_seqs = 256;
  std::int64_t max_num_batched_tokens = 8192;
  bool chunked_prefill = true;
  // Policy variations (see the registered kinds vllm_v1, sarathi, orca, static):
  bool decode_first = false;   // decodes before unfinished prefill chunks (Sarathi-Serve)
  bool reserve_full = false;   // reserve KV for prompt + all output at admission (Orca): no preemption
  bool static_batch = false;   // admit a new batch only when the previous one has finished
  // vLLM v0 without chunked prefill: a step runs new prompts only (as many as fit) while any can
  // be admitted, otherwise the running decodes; the two never share a step.
  bool prefill_first = false;
  // vLLM v0.6's --num-scheduler-steps: a batch of decodes runs this many passes per scheduling,
  // with KV room reserved for all of them, and streams its tokens once at the end.
  int multi_step = 1;
};

class BatchScheduler {
 public:
  virtual ~BatchScheduler() = default;
  virtual void add(Request* request) = 0;
  // Fills `plan` (cleared first). An engine loop passes the same plan every step: its vectors
  // keep their capacity, so a step allocates nothing.
  virtual void schedule(StepPlan& plan) = 0;
  // Applies a step's progress; `now_s` stamps the tokens it produced. Fills `outcome` (cleared
  // first; reused like the plan).
  virtual void complete(const StepPlan& plan, double now_s, StepOutcome& outcome) = 0;
  StepPlan schedule() {
    StepPlan plan;
    schedule(plan);
    return plan;
  }
  StepOutcome complete(const StepPlan& plan, double now_s) {
    StepOutcome outcome;
    complete(plan, now_s, outcome);
    return outcome;
  }
  virtual bool has_work() const = 0;
  // Tokens one step must hold for this request to run at all (0: any budget will do). Without
  // chunked prefill a prompt runs whole, and a request preempted by recompute re-runs its prompt
  // and all but its last output token whole.
  virtual std::int64_t whole_step_tokens(const Request&) const { return 0; }
  virtual std::int64_t max_num_batched_tokens() const { return std::numeric_limits<std::int64_t>::max(); }
  virtual std::size_t num_running() const = 0;
  virtual std::size_t num_waiting() const = 0;
  // Speculative decoding with k drafts per decode (see ContinuousBatchingScheduler). A
  // scheduler that cannot throws std::logic_error.
  virtual void set_speculative(int k, AcceptDrafts accept) {
    (void)k;
    (void)accept;
    throw std::logic_error("this scheduler does not model speculative decoding");
  }
};

struct SchedulerArgs {
  config::Params params;
  KvBlockManager* kv;  // owned by the replica
};

using SchedulerRegistry = registry::Registry<BatchScheduler, const SchedulerArgs&>;
inline SchedulerRegistry& scheduler_registry() { return SchedulerRegistry::instance("scheduler"); }

// Continuous batching as in vLLM v1: running requests first (decodes and unfinished prefill
// chunks, in arrival order), then waiting requests FIFO, all under one token budget per step;
// prefills are chunked to fit the budget; a new request starts after its longest cached prefix
// (prefix caching); when KV blocks run out, the most recently admitted running request is
// preempted and later recomputed. SchedulerLimits' policy flags turn it into vLLM v0 (prefills
// first, multi-step decodes), Sarathi-Serve, Orca or static batching.
class ContinuousBatchingScheduler final : public BatchScheduler {
 public:
  ContinuousBatchingScheduler(const SchedulerLimits& limits, KvBlockManager& kv);

  using BatchScheduler::complete;
  using BatchScheduler::schedule;
  void add(Request* request) override;
  void schedule(StepPlan& plan) override;
  void complete(const StepPlan& plan, double now_s, StepOutcome& outcome) override;
  bool has_work() const override { return !running_.empty() || !waiting_.empty(); }
  std::int64_t whole_step_tokens(const Request& r) const override {
    if (limits_.chunked_prefill) return 0;
    return limits_.reserve_full ? r.prompt_tokens : r.prompt_tokens + r.output_tokens - 1;
  }
  std::int64_t max_num_batched_tokens() const override { return limits_.max_num_batched_tokens; }
  std::size_t num_running() const override { return running_.size(); }
  std::size_t num_waiting() const override { return waiting_.size(); }
  // Speculative decoding: a running decode computes its last token and d = min(k, tokens it
  // still has to emit - 1, budget - 1) drafts, all counted in the token budget, with KV room
  // reserved for the 1 + d tokens. On completion `accept(d)` says how many drafts were
  // accepted: the sequence emits accepted + 1 tokens (one streamed chunk) and the blocks of the
  // rejected drafts are freed. Not with multi-step scheduling (std::invalid_argument).
  void set_speculative(int k, AcceptDrafts accept) override;

 private:
  std::int64_t tokens_to_compute(const Request& r) const { return r.sequence_length() - r.computed_tokens; }
  void preempt(Request* request, StepPlan& plan);
  // Removes the latest admitted request of running_[from, end) not in flight from running_;
  // nullptr if there is none.
  Request* take_victim(std::size_t from);
  void schedule_running(StepPlan& plan, std::int64_t& budget);
  void admit_waiting(StepPlan& plan, std::int64_t& budget);

  SchedulerLimits limits_;
  KvBlockManager& kv_;
  std::vector<Request*> running_;  // in admission order
  std::deque<Request*> waiting_;
  std::vector<Request*> kept_;  // schedule_running's scratch list
  int spec_k_ = 0;              // drafts per decode (0: no speculative decoding)
  AcceptDrafts accept_;
};

}  // namespace ks::serving
