// The registered scheduler kinds: one engine (ContinuousBatchingScheduler) with the policy flags
// that distinguish vLLM v1, vLLM v0, Sarathi-Serve, Orca and static batching.
#include "serving/batch_scheduler.hpp"

namespace ks::serving {
namespace {

config::Schema common(const std::string& doc, std::int64_t seqs, std::int64_t tokens, const char* tokens_doc) {
  config::Schema schema(doc);
  schema.integer("max_num_seqs", seqs, "most sequences in one step", 1)
      .integer("max_num_batched_tokens", tokens, tokens_doc, 1);
  return schema;
}

SchedulerLimits limits_of(const config::Params& p) {
  SchedulerLimits limits;
  limits.max_num_seqs = p.integer("max_num_seqs");
  limits.max_num_batched_tokens = p.integer("max_num_batched_tokens");
  return limits;
}

void add(const std::string& kind, const config::Schema& schema, void (*tune)(SchedulerLimits&, const config::Params&)) {
  scheduler_registry().add(kind, {schema.doc(), schema, [tune](const SchedulerArgs& args) -> std::unique_ptr<BatchScheduler> {
                                    SchedulerLimits limits = limits_of(args.params);
                                    tune(limits, args.params);
                                    return std::make_unique<ContinuousBatchingScheduler>(limits, *args.kv);
                                  }});
}

const bool registered = [] {
  add("vllm_v1",
      common("Continuous batching with chunked prefill under a token budget, as in vLLM v1: running "
             "requests (decodes and prefill chunks) in arrival order, then waiting ones FIFO.",
             256, 8192, "token budget of one step")
          .flag("enable_chunked_prefill", true, "split long prompts over several steps to fit the budget"),
      [](SchedulerLimits& l, const config::Params& p) { l.chunked_prefill = p.flag("enable_chunked_prefill"); });
  add("vllm_v0",
      common("vLLM v0 (up to 0.6) default scheduler. Without chunked prefill a step runs either new prompts "
             "(whole, as many as fit the budget) or the running decodes, prompts first; with "
             "num_scheduler_steps > 1 a batch of decodes runs that many passes per scheduling and streams "
             "its tokens once at the end (--num-scheduler-steps). With chunked prefill: decodes first, then "
             "prefill chunks, under the budget.",
             256, 8192, "token budget of one step (vLLM: max(max_model_len, 2048) without chunking)")
          .flag("enable_chunked_prefill", false, "split long prompts over several steps to fit the budget")
          .integer("num_scheduler_steps", 1, "decode passes per scheduling (multi-step); needs chunking off", 1, 64),
      [](SchedulerLimits& l, const config::Params& p) {
        l.chunked_prefill = p.flag("enable_chunked_prefill");
        l.decode_first = l.chunked_prefill;
        l.prefill_first = !l.chunked_prefill;
        l.multi_step = static_cast<int>(p.integer("num_scheduler_steps"));
      });
  add("sarathi",
      common("Sarathi-Serve stall-free batching: decodes first, then unfinished prefill chunks, then new "
             "prompts, chunked to a small token budget so decodes never wait behind a long prefill.",
             256, 512, "token budget (chunk size) of one step"),
      [](SchedulerLimits& l, const config::Params&) {
        l.chunked_prefill = true;
        l.decode_first = true;
      });
  add("orca",
      common("Orca iteration-level scheduling: whole prompts (no chunking) join the running batch between "
             "iterations; KV for prompt + maximum output is reserved at admission, so nothing is preempted.",
             256, 8192, "most tokens in one iteration (a prompt must fit whole)"),
      [](SchedulerLimits& l, const config::Params&) {
        l.chunked_prefill = false;
        l.reserve_full = true;
      });
  add("static",
      common("Static batching (request-level): a batch of up to max_num_seqs requests is prefilled whole and "
             "decoded until its last request finishes; only then is the next batch admitted.",
             64, 65536, "most prompt tokens of one batch's prefill"),
      [](SchedulerLimits& l, const config::Params&) {
        l.chunked_prefill = false;
        l.reserve_full = true;
        l.static_batch = true;
      });
  return true;
}();

}  // namespace
}  // namespace ks::serving
