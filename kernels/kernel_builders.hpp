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

}  // namespace ks::kernels
