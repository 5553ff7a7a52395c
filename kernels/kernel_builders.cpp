#include "kernels/kernel_builders.hpp"

#include <algorithm>

namespace ks::kernels {
namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
}  // namespace

Kernel make_gemm(const char* name, std::int64_t m, std::int64_t n, std::int64_t k, DType gemm_dtype,
                 double act_bytes, double weight_bytes, std::int64_t batch, bool bias) {
  const double b = bias ? 1.0 : 0.0;
  Kernel g{OpKind::Gemm, name, gemm_dtype, m, n, k,
           d(batch) * (2.0 * d(m) * d(n) * d(k) + b * d(m) * d(n)),
           d(batch) * ((d(m) * d(k) + d(m) * d(n)) * act_bytes + (d(n) * d(k) + b * d(n)) * weight_bytes)};
  g.batch = batch;
  return g;
}

Kernel make_rms_norm(const char* name, std::int64_t tokens, std::int64_t width, DType act) {
  const double elems = d(tokens) * d(width);
  return Kernel{OpKind::RmsNorm, name, act, tokens, width, 0, 4.0 * elems, (2.0 * elems + d(width)) * dtype_bytes(act)};
}

Kernel make_layer_norm(const char* name, std::int64_t tokens, std::int64_t width, DType act) {
  // Mean, variance, normalise, scale, shift: ~5 FLOPs per element; weight and bias read once.
  const double elems = d(tokens) * d(width);
  return Kernel{OpKind::LayerNorm, name, act, tokens, width, 0, 5.0 * elems,
                (2.0 * elems + 2.0 * d(width)) * dtype_bytes(act)};
}

Kernel make_add(const char* name, std::int64_t tokens, std::int64_t width, DType act) {
  const double elems = d(tokens) * d(width);
  return Kernel{OpKind::Add, name, act, tokens, width, 0, elems, 3.0 * elems * dtype_bytes(act)};
}

Kernel make_silu_mul(const char* name, std::int64_t tokens, std::int64_t width, DType act) {
  const double elems = d(tokens) * d(width);
  return Kernel{OpKind::SiluMul, name, act, tokens, width, 0, 5.0 * elems, 3.0 * elems * dtype_bytes(act)};
}

Kernel make_gelu(const char* name, std::int64_t tokens, std::int64_t width, DType act) {
  const double elems = d(tokens) * d(width);
  return Kernel{OpKind::Gelu, name, act, tokens, width, 0, 8.0 * elems, 2.0 * elems * dtype_bytes(act)};
}

Kernel make_rope(const char* name, std::int64_t tokens, std::int64_t q_heads, std::int64_t kv_heads,
                 std::int64_t rotary_dim, DType act) {
  const double elems = d(tokens) * d(q_heads + kv_heads) * d(rotary_dim);
  return Kernel{OpKind::Rope, name, act, tokens, (q_heads + kv_heads) * rotary_dim, 0, 3.0 * elems,
                (2.0 * elems + d(tokens) * d(rotary_dim)) * dtype_bytes(act)};
}

Kernel make_embedding(const char* name, std::int64_t tokens, std::int64_t hidden, DType act) {
  return Kernel{OpKind::Embedding, name, act, tokens, hidden, 0, 0.0, d(tokens) * d(hidden) * dtype_bytes(act) * 2.0};
}

Kernel make_attention_prefill(const char* name, std::int64_t sequences, std::int64_t queries, std::int64_t kv_read,
                              std::int64_t pairs, std::int64_t q_heads, std::int64_t kv_heads, std::int64_t head_dim, DType act,
                              DType kv) {
  const double act_b = dtype_bytes(act), kv_b = dtype_bytes(kv);
  const double qh = d(q_heads), kvh = d(kv_heads), hd = d(head_dim), q = d(queries);
  const double flops = 4.0 * qh * hd * d(pairs);
  const double bytes = 2.0 * q * qh * hd * act_b + d(kv_read) * 2.0 * kvh * hd * kv_b + q * 2.0 * kvh * hd * kv_b;
  // FlashAttention, causal
  return Kernel{OpKind::AttentionPrefill, name, act, queries, kv_read, head_dim, flops, bytes, Phase::Prefill, 1,
                std::max<std::int64_t>(sequences, 1), q_heads, kv_heads};
}

Kernel make_attention_decode(const char* name, std::int64_t sequences, std::int64_t context, std::int64_t q_heads,
                             std::int64_t kv_heads, std::int64_t head_dim, DType act, DType kv) {
  const double act_b = dtype_bytes(act), kv_b = dtype_bytes(kv);
  const double qh = d(q_heads), kvh = d(kv_heads), hd = d(head_dim), s = d(sequences), ctx = d(context);
  const double flops = 4.0 * qh * hd * ctx;
  const double bytes = ctx * 2.0 * kvh * hd * kv_b + 2.0 * s * qh * hd * act_b + s * 2.0 * kvh * hd * kv_b;
  return Kernel{OpKind::AttentionDecode, name, act, sequences, context, head_dim, flops, bytes, Phase::Decode, 1,
                std::max<std::int64_t>(sequences, 1), q_heads, kv_heads};
}

Kernel make_attention_verify(const char* name, std::int64_t sequences, std::int64_t queries, std::int64_t keys,
                             std::int64_t pairs, std::int64_t q_heads, std::int64_t kv_heads, std::int64_t head_dim,
                             DType act, DType kv) {
  const double act_b = dtype_bytes(act), kv_b = dtype_bytes(kv);
  const double qh = d(q_heads), kvh = d(kv_heads), hd = d(head_dim), q = d(queries);
  const double flops = 4.0 * qh * hd * d(pairs);
  const double bytes = d(keys) * 2.0 * kvh * hd * kv_b + 2.0 * q * qh * hd * act_b + q * 2.0 * kvh * hd * kv_b;
  return Kernel{OpKind::AttentionDecode, name, act, queries, keys, head_dim, flops, bytes, Phase::Decode, 1,
                std::max<std::int64_t>(sequences, 1), q_heads, kv_heads};
}

double decode_kv_element_bytes(const Kernel& k) {
  const double act_b = dtype_bytes(k.dtype);
  if (k.kv_heads <= 0 || k.heads <= 0 || k.k <= 0) return act_b;
  // bytes = (keys + queries) x 2 x KV heads x head_dim x kv_b + 2 x queries x heads x head_dim x act_b
  const double q = d(k.m), hd = d(k.k);
  const double kv = (k.bytes - 2.0 * q * d(k.heads) * hd * act_b) / (2.0 * d(k.kv_heads) * hd * (d(k.n) + q));
  return std::clamp(kv, 0.25, 8.0);
}

Kernel make_mla_attention_prefill(const char* name, std::int64_t sequences, std::int64_t queries,
                                  std::int64_t kv_read, std::int64_t pairs, std::int64_t q_heads, std::int64_t qk_dim,
                                  std::int64_t v_dim, std::int64_t latent_dim, DType act, DType kv) {
  const double act_b = dtype_bytes(act), kv_b = dtype_bytes(kv);
  const double qh = d(q_heads), q = d(queries), qk = d(qk_dim), v = d(v_dim);
  const double flops = 2.0 * qh * (qk + v) * d(pairs);
  const double bytes = q * qh * (qk + v) * act_b + d(kv_read) * qh * (qk + v) * act_b + q * d(latent_dim) * kv_b;
  return Kernel{OpKind::AttentionPrefill, name, act, queries, kv_read, qk_dim, flops, bytes, Phase::Prefill, 1,
                std::max<std::int64_t>(sequences, 1), q_heads};
}

Kernel make_mla_attention_decode(const char* name, std::int64_t sequences, std::int64_t queries, std::int64_t keys,
                                 std::int64_t pairs, std::int64_t q_heads, std::int64_t latent_dim,
                                 std::int64_t kv_lora_rank, DType act, DType kv) {
  const double act_b = dtype_bytes(act), kv_b = dtype_bytes(kv);
  const double qh = d(q_heads), q = d(queries), lat = d(latent_dim), r = d(kv_lora_rank);
  const double flops = 2.0 * qh * (lat + r) * d(pairs);
  const double bytes = d(keys) * lat * kv_b + q * qh * (lat + r) * act_b + q * lat * kv_b;
  return Kernel{OpKind::AttentionDecode, name, act, queries, keys, latent_dim, flops, bytes, Phase::Decode, 1,
                std::max<std::int64_t>(sequences, 1), q_heads};
}

}  // namespace ks::kernels
