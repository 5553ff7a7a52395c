#include "kernels/kernel_shape.hpp"

#include <stdexcept>

#include "kernels/kernel_builders.hpp"
#include "kernels/step_decomposer.hpp"

namespace ks::kernels {

const std::vector<std::string>& shape_op_names() {
  static const std::vector<std::string> names{"gemm", "rmsnorm", "layernorm", "silu_mul", "gelu", "rope",
                                              "add", "embedding", "attention_prefill", "attention_decode"};
  return names;
}

namespace {
void need(bool ok, const KernelShape& s, const char* what) {
  if (!ok) throw std::invalid_argument(s.op + " needs " + what);
}
}  // namespace

Kernel build_kernel(const KernelShape& s) {
  const DType act = activation_dtype(s.dtype);
  const DType kv = s.kv_dtype.value_or(act);
  if (s.op == "gemm") {
    need(s.m > 0 && s.n > 0 && s.k > 0 && s.batch > 0, s, "m, n, k > 0 (and batch > 0)");
    return make_gemm("gemm", s.m, s.n, s.k, gemm_compute_dtype(s.dtype), dtype_bytes(act), dtype_bytes(s.dtype),
                     s.batch);
  }
  const bool rows = s.tokens > 0 && s.hidden > 0;
  if (s.op == "rmsnorm") return need(rows, s, "tokens, hidden > 0"), make_rms_norm("rmsnorm", s.tokens, s.hidden, act);
  if (s.op == "layernorm")
    return need(rows, s, "tokens, hidden > 0"), make_layer_norm("layernorm", s.tokens, s.hidden, act);
  if (s.op == "add") return need(rows, s, "tokens, hidden > 0"), make_add("add", s.tokens, s.hidden, act);
  if (s.op == "embedding")
    return need(rows, s, "tokens, hidden > 0"), make_embedding("embedding", s.tokens, s.hidden, act);
  if (s.op == "silu_mul")
    return need(rows, s, "tokens, hidden (the intermediate width) > 0"), make_silu_mul("silu_mul", s.tokens, s.hidden, act);
  if (s.op == "gelu")
    return need(rows, s, "tokens, hidden (the intermediate width) > 0"), make_gelu("gelu", s.tokens, s.hidden, act);
  const bool heads = s.heads > 0 && s.kv_heads > 0 && s.head_dim > 0;
  if (s.op == "rope") {
    need(s.tokens > 0 && heads, s, "tokens, heads, kv_heads, head_dim > 0");
    return make_rope("rope", s.tokens, s.heads, s.kv_heads, s.head_dim, act);
  }
  if (s.op == "attention_prefill") {
    need(heads && s.batch > 0 && s.q_len > 0 && s.kv_len >= s.q_len, s,
         "batch, q_len > 0, kv_len >= q_len, heads, kv_heads, head_dim > 0");
    const std::int64_t cached = s.kv_len - s.q_len;
    // The query-key pairs must stay exact in int64 (shapes come from users' files).
    need(static_cast<double>(s.batch) * (static_cast<double>(s.q_len) * static_cast<double>(s.kv_len)) < 4e18, s,
         "batch x q_len x kv_len below 4e18");
    const std::int64_t pairs = s.batch * (s.q_len * cached + s.q_len * (s.q_len + 1) / 2);
    Kernel k = make_attention_prefill("attention_prefill", s.batch, s.batch * s.q_len, s.batch * s.kv_len, pairs,
                                      s.heads, s.kv_heads, s.head_dim, act, kv);
    // fp8 attention (FlashAttention-3, TensorRT-LLM's FMHA) computes on fp8 tensor cores.
    if (s.dtype == DType::FP8) k.dtype = DType::FP8;
    return k;
  }
  if (s.op == "attention_decode") {
    need(heads && s.batch > 0 && s.kv_len > 0, s, "batch, kv_len, heads, kv_heads, head_dim > 0");
    return make_attention_decode("attention_decode", s.batch, s.batch * s.kv_len, s.heads, s.kv_heads, s.head_dim,
                                 act, kv);
  }
  std::string known;
  for (const auto& n : shape_op_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown op '" + s.op + "' (known: " + known + ")");
}

}  // namespace ks::kernels
