#pragma once
// What the engine runs in one iteration: prefill chunks and decode tokens, and how the model
// is split across GPUs.
#include <cstdint>
#include <vector>

namespace ks::kernels {

struct PrefillChunk {
  std::int64_t tokens;  // prompt tokens processed in this step
  std::int64_t
      cached;  // tokens of this sequence already in the KV cache (earlier chunks, prefix hits)
  bool last_chunk = true;  // the chunk completes the prompt, so the step samples its first token
};

struct StepBatch {
  std::vector<PrefillChunk> prefills;
  std::vector<std::int64_t> decode_contexts;  // per decode sequence: context incl. the new token

  // Tokens through the dense layers: all prefill chunk tokens + one per decode.
  std::int64_t num_tokens() const {
    std::int64_t total = static_cast<std::int64_t>(decode_contexts.size());
    for (const PrefillChunk& chunk : prefills) total += chunk.tokens;
    return total;
  }
  // Rows that reach the LM head: every decode + every prefill that finishes its prompt.
  std::int64_t sampled_tokens() const {
    std::int64_t total = static_cast<std::int64_t>(decode_contexts.size());
    for (const PrefillChunk& chunk : prefills) total += chunk.last_chunk ? 1 : 0;
    return total;
  }
  bool empty() const { return prefills.empty() && decode_contexts.empty(); }
};

struct ParallelConfig {
  int tp = 1;  // tensor parallel: Megatron-style column/row split of every layer
  int pp = 1;  // pipeline parallel: contiguous blocks of layers per stage
  // Expert parallel (MoE models): the routed experts are placed round-robin over ep ranks (the
  // TP group: ep is 1 or tp) instead of split by TP; tokens reach them by all-to-all.
  int ep = 1;
  // Routing imbalance under EP: rows on the busiest rank / mean rows per rank (1 = uniform;
  // at most ep). The busiest rank sets the step time, so its load is what is priced.
  double moe_imbalance = 1.0;
  // Attention data parallelism (SGLang's --enable-dp-attention, vLLM's data-parallel attention with
  // expert parallelism; MoE models, ep = tp > 1, pp = 1): each of the tp ranks holds the whole
  // attention, dense-MLP, shared-expert, embedding and LM-head weights and runs them over its own
  // sequences with its own KV cache; only the routed experts are split (ep ranks, all-to-all).
  // The step's kernels are the busiest rank's (kernels::dp_rank_batch).
  bool dp_attention = false;
};

}  // namespace ks::kernels
