#pragma once
// Kernels from their shapes, with the FLOP and byte conventions of the step decomposer (see
// step_decomposer.hpp). Measurements are turned into kernels with these, so a kernel priced in a
// simulation and the same kernel measured in a sweep have identical features.
#include <cstdint>

#include "kernels/dtype.hpp"
#include "kernels/kernel.hpp"

namespace ks::kernels {

// [batch x m x k] . [batch x k x n]: read input and weights, write output; activations of
// act_bytes, weights of weight_bytes per element, computing in gemm_dtype. A bias is one more
// weight vector read and one add per output.
Kernel make_gemm(const char* name, std::int64_t m, std::int64_t n, std::int64_t k, DType gemm_dtype,
                 double act_bytes, double weight_bytes, std::int64_t batch = 1, bool bias = false);
Kernel make_rms_norm(const char* name, std::int64_t tokens, std::int64_t width, DType act);
Kernel make_layer_norm(const char* name, std::int64_t tokens, std::int64_t width, DType act);
Kernel make_add(const char* name, std::int64_t tokens, std::int64_t width, DType act);
Kernel make_silu_mul(const char* name, std::int64_t tokens, std::int64_t width, DType act);
Kernel make_gelu(const char* name, std::int64_t tokens, std::int64_t width, DType act);
// Rotates the first rotary_dim dims of Q and K in place; reads the cos/sin cache per token.
Kernel make_rope(const char* name, std::int64_t tokens, std::int64_t q_heads, std::int64_t kv_heads,
                 std::int64_t rotary_dim, DType act);
Kernel make_embedding(const char* name, std::int64_t tokens, std::int64_t hidden, DType act);
// Causal prefill over `sequences` sequences: `queries` new tokens in total, `kv_read` keys read in total
// (cached + new), `pairs` causal (query, key) pairs in total.
Kernel make_attention_prefill(const char* name, std::int64_t sequences, std::int64_t queries, std::int64_t kv_read,
                              std::int64_t pairs,
                              std::int64_t q_heads, std::int64_t kv_heads, std::int64_t head_dim, DType act,
                              DType kv);
// Decode: `sequences` queries, `context` keys read in total (each sequence's context incl. new token).
Kernel make_attention_decode(const char* name, std::int64_t sequences, std::int64_t context, std::int64_t q_heads,
                             std::int64_t kv_heads, std::int64_t head_dim, DType act, DType kv);
// Decode with several queries per sequence (speculative decoding's verification: a sequence's
// last token and its drafts): `queries` query tokens in total over `sequences` sequences, `keys`
// keys read in total (each sequence's KV once, up to its last query), `pairs` (query, key) pairs
// scored. One query per sequence (queries = sequences, pairs = keys) is make_attention_decode.
Kernel make_attention_verify(const char* name, std::int64_t sequences, std::int64_t queries, std::int64_t keys,
                             std::int64_t pairs, std::int64_t q_heads, std::int64_t kv_heads, std::int64_t head_dim,
                             DType act, DType kv);

// The bytes of one key or value element of a decode's KV cache, recovered from a kernel built by
// make_attention_decode or make_attention_verify (the inverse of their byte count). Kernels without
// KV heads (multi-head latent attention, plug-ins): the activation dtype's.
double decode_kv_element_bytes(const Kernel& kernel);

// Multi-head latent attention (DeepSeek-V2/V3), prefill as vLLM's naive path: the cached latents
// of every key were up-projected (kv_b_proj) to per-head K (qk_dim = nope + rope) and V (v_dim)
// in the activation dtype; FlashAttention over them (no GQA: q_heads K/V heads). FLOPs
// 2 * heads * (qk_dim + v_dim) per pair; bytes: Q and O, the up-projected K and V of `kv_read`
// keys, and the new tokens' latents (latent_dim each, kv dtype) written to the cache.
Kernel make_mla_attention_prefill(const char* name, std::int64_t sequences, std::int64_t queries,
                                  std::int64_t kv_read, std::int64_t pairs, std::int64_t q_heads, std::int64_t qk_dim,
                                  std::int64_t v_dim, std::int64_t latent_dim, DType act, DType kv);
// MLA decode as the absorbed path (FlashMLA / vLLM's MLA decode): queries already multiplied into
// the latent space (latent_dim = kv_lora_rank + rope per head), one latent KV row per key shared by
// every head (MQA-like), output in the latent space (kv_lora_rank per head). `queries` query tokens
// over `sequences` sequences, `keys` latent rows read (each sequence's once), `pairs` scored.
// FLOPs 2 * heads * (latent_dim + kv_lora_rank) per pair; bytes: the keys' latents, Q, O, and
// the new tokens' latents written.
Kernel make_mla_attention_decode(const char* name, std::int64_t sequences, std::int64_t queries, std::int64_t keys,
                                 std::int64_t pairs, std::int64_t q_heads, std::int64_t latent_dim,
                                 std::int64_t kv_lora_rank, DType act, DType kv);

}  // namespace ks::kernels
