#pragma once
// A request's identity and progress. Requests are data (no thread per request): the replica's
// scheduler moves them between queues and the metrics read their timestamps.
#include <cstdint>

namespace ks::serving {

struct Request {
  std::uint64_t id = 0;
  double arrival_s = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;  // tokens to generate (>= 1)

  // progress
  std::int64_t computed_tokens = 0;  // tokens whose KV is in the cache
  std::int64_t generated = 0;        // output tokens produced so far
  std::int64_t kv_blocks = 0;        // KV-cache blocks held
  double first_token_s = -1;
  double last_token_s = -1;
  double finish_s = -1;
  int preemptions = 0;

  // Tokens of the sequence so far: the prompt plus everything generated.
  std::int64_t sequence_length() const { return prompt_tokens + generated; }
  bool finished() const { return generated >= output_tokens; }
};

}  // namespace ks::serving
