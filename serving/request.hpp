#pragma once
// A request's identity and progress. Requests are data (no thread per request): the replica's
// scheduler moves them between queues and the metrics read their timestamps.
#include <cstdint>
#include <memory>
#include <vector>

namespace ks::serving {

struct Request {
  std::uint64_t id = 0;
  double arrival_s = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;  // tokens to generate (>= 1)

  // Token identity, for prefix caching. Token i (prompt or generated) is the same token in every
  // request of the same prefix group when i < group_tokens (a shared system prompt, or a
  // conversation whose turns extend each other); otherwise it belongs to this request alone.
  // `prompt_ids`, when the workload gives real token ids, identifies the prompt tokens instead.
  std::uint64_t prefix_group = 0;  // 0: no group
  std::int64_t group_tokens = 0;
  std::shared_ptr<const std::vector<std::int32_t>> prompt_ids;

  // progress
  std::int64_t computed_tokens = 0;  // tokens whose KV is in the cache
  std::int64_t generated = 0;        // output tokens produced so far
  std::int64_t kv_blocks = 0;        // KV-cache blocks held (= block_table.size())
  std::vector<std::int32_t> block_table;      // KV blocks in sequence order
  std::vector<std::uint64_t> block_hashes;    // hash chain of the full blocks computed so far
  std::int64_t kv_committed_blocks = 0;   // leading blocks already registered in the prefix cache
  std::int64_t cached_tokens = -1;   // prefix-cache hit tokens at first admission (-1: not yet)
  std::int64_t replica = -1;         // where the router sent it
  double first_scheduled_s = -1;
  double first_token_s = -1;
  double last_token_s = -1;
  double finish_s = -1;
  int preemptions = 0;
  // In a micro-batch still in the pipeline (pp > 1): the scheduler neither schedules nor
  // preempts it until that batch's tokens are out (vLLM v1's scheduled_req_ids).
  bool in_flight = false;

  // Tokens of the sequence so far: the prompt plus everything generated.
  std::int64_t sequence_length() const { return prompt_tokens + generated; }
  bool finished() const { return generated >= output_tokens; }
  // A finished request keeps its timestamps only: a million-request run must not keep every
  // request's block table and hash chain (kilobytes each) until the end.
  void drop_working_state() {
    std::vector<std::int32_t>().swap(block_table);
    std::vector<std::uint64_t>().swap(block_hashes);
    prompt_ids.reset();
  }
};

}  // namespace ks::serving
