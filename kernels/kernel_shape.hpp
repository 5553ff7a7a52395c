#pragma once
// A kernel described by its operator and shape columns, as in measurement sweeps and the
// `kernelsight kernels` input:  op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len
//
//   gemm                         m, n, k, batch (default 1); dtype = compute (weight) dtype
//   rmsnorm, layernorm, add,
//   embedding, silu_mul, gelu    tokens, hidden (the row width: intermediate size for silu_mul/gelu)
//   rope                         tokens, heads, kv_heads, head_dim
//   attention_prefill            batch sequences of q_len new tokens with kv_len context each
//                                (kv_len includes the new tokens), heads, kv_heads, head_dim
//   attention_decode             batch sequences of kv_len context each, heads, kv_heads, head_dim
//
// Optional column kv_dtype: the attention KV-cache dtype (e.g. fp8 for an fp8 cache under bf16
// activations); blank = the activation dtype. Other ops ignore it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/dtype.hpp"
#include "kernels/kernel.hpp"

namespace ks::kernels {

struct KernelShape {
  std::string op;
  DType dtype = DType::BF16;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::int64_t tokens = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, q_len = 0, kv_len = 0;
  std::optional<DType> kv_dtype;  // attention KV cache; unset = the activation dtype
};

// The operator names accepted in `op`.
const std::vector<std::string>& shape_op_names();

// Throws std::invalid_argument naming the missing or invalid field (e.g. "gemm needs m, n, k > 0").
Kernel build_kernel(const KernelShape& shape);

}  // namespace ks::kernels
