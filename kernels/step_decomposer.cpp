#include "kernels/step_decomposer.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ks::kernels {

DType activation_dtype(DType weight_dtype) {
  return weight_dtype == DType::FP32 ? DType::FP32 : DType::BF16;
}

DType gemm_compute_dtype(DType weight_dtype) {
  return weight_dtype == DType::INT4 ? activation_dtype(weight_dtype) : weight_dtype;
}

int layers_per_stage(int num_layers, int pp) { return (num_layers + pp - 1) / pp; }

namespace {

using i64 = std::int64_t;

void check_parallel(const ModelConfig& model, const ParallelConfig& parallel) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("model '" + model.name +
                                "' with tp=" + std::to_string(parallel.tp) +
                                ", pp=" + std::to_string(parallel.pp) + ": " + what);
  };
  if (parallel.tp < 1 || parallel.pp < 1) fail("tp and pp must be >= 1");
  if (model.num_heads % parallel.tp != 0) fail("num_heads is not divisible by tp");
  if (model.intermediate_size % parallel.tp != 0) fail("intermediate_size is not divisible by tp");
  if (model.num_kv_heads % parallel.tp != 0 && parallel.tp % model.num_kv_heads != 0) {
    fail("num_kv_heads and tp must divide one another (KV heads are split or replicated)");
  }
  if (parallel.pp > model.num_layers) fail("more pipeline stages than layers");
}

// Collects the kernels of one list with the step-wide constants at hand.
struct Emitter {
  std::vector<Kernel>* out;
  DType act;      // activation / elementwise compute dtype
  DType gemm_dt;  // GEMM compute dtype
  double act_b;   // bytes per activation element
  double w_b;     // bytes per weight element
  Phase phase;

  void push(OpKind op, const char* name, DType dt, i64 m, i64 n, i64 k, double flops, double bytes,
            Phase ph) {
    out->push_back(Kernel{op, name, dt, m, n, k, flops, bytes, ph});
  }
  // [m x k] activations times [k x n] weights: read input and weights, write output.
  void gemm(const char* name, i64 m, i64 n, i64 k) {
    const double md = static_cast<double>(m), nd = static_cast<double>(n),
                 kd = static_cast<double>(k);
    push(OpKind::Gemm, name, gemm_dt, m, n, k, 2.0 * md * nd * kd,
         (md * kd + md * nd) * act_b + nd * kd * w_b, phase);
  }
  // Reads the rows and the weight vector, writes the normalised rows.
  void rms_norm(const char* name, i64 tokens, i64 width) {
    const double elems = static_cast<double>(tokens) * static_cast<double>(width);
    push(OpKind::RmsNorm, name, act, tokens, width, 0, 4.0 * elems,
         (2.0 * elems + static_cast<double>(width)) * act_b, phase);
  }
  // Residual add: two inputs, one output.
  void add(const char* name, i64 tokens, i64 width) {
    const double elems = static_cast<double>(tokens) * static_cast<double>(width);
    push(OpKind::Add, name, act, tokens, width, 0, elems, 3.0 * elems * act_b, phase);
  }
  // Collective over the TP group: bytes = full tensor per rank; no FLOPs priced here.
  void collective(OpKind op, const char* name, i64 tokens, i64 width) {
    const double elems = static_cast<double>(tokens) * static_cast<double>(width);
    push(op, name, act, tokens, width, 0, 0.0, elems * act_b, phase);
  }
};

}  // namespace

StepKernels decompose_step(const ModelConfig& model, const StepBatch& batch, DType weight_dtype,
                           DType kv_dtype, const ParallelConfig& parallel) {
  StepKernels out;
  decompose_step(model, batch, weight_dtype, kv_dtype, parallel, out);
  return out;
}

void decompose_step(const ModelConfig& model, const StepBatch& batch, DType weight_dtype,
                    DType kv_dtype, const ParallelConfig& parallel, StepKernels& out) {
  if (model.num_experts > 0) throw std::invalid_argument("MoE not supported yet");
  model.validate();
  check_parallel(model, parallel);

  out.pre.clear();
  out.per_layer.clear();
  out.post.clear();
  out.num_layers = layers_per_stage(model.num_layers, parallel.pp);

  // One pass over the batch for every sum the attention kernels need.
  i64 prefill_q = 0;      // query tokens of all prefill chunks
  i64 prefill_kv = 0;     // keys each chunk reads: cached + new
  i64 prefill_pairs = 0;  // causal (query, key) pairs: chunk*cached + chunk*(chunk+1)/2
  i64 sampled = static_cast<i64>(batch.decode_contexts.size());
  for (const PrefillChunk& chunk : batch.prefills) {
    if (chunk.tokens < 1 || chunk.cached < 0) {
      throw std::invalid_argument("prefill chunk needs tokens >= 1 and cached >= 0, got tokens=" +
                                  std::to_string(chunk.tokens) +
                                  ", cached=" + std::to_string(chunk.cached));
    }
    prefill_q += chunk.tokens;
    prefill_kv += chunk.cached + chunk.tokens;
    prefill_pairs += chunk.tokens * chunk.cached + chunk.tokens * (chunk.tokens + 1) / 2;
    if (chunk.last_chunk) ++sampled;
  }
  const i64 decodes = static_cast<i64>(batch.decode_contexts.size());
  i64 decode_ctx = 0;
  for (std::int64_t ctx : batch.decode_contexts) {
    if (ctx < 1) {
      throw std::invalid_argument("decode context must be >= 1 (it includes the new token), got " +
                                  std::to_string(ctx));
    }
    decode_ctx += ctx;
  }
  const i64 tokens = prefill_q + decodes;
  if (tokens == 0) return;

  const int tp = parallel.tp;
  const i64 hidden = model.hidden_size;
  const i64 head_dim = model.head_dim;
  const i64 q_heads = model.num_heads / tp;
  // vLLM replicates KV heads when there are fewer than ranks: one per rank.
  const i64 kv_heads = model.num_kv_heads >= tp ? model.num_kv_heads / tp : 1;
  const i64 inter = model.intermediate_size / tp;
  const i64 vocab_shard = (static_cast<i64>(model.vocab_size) + tp - 1) / tp;

  const DType act = activation_dtype(weight_dtype);
  const Phase phase = prefill_q == 0 ? Phase::Decode : decodes == 0 ? Phase::Prefill : Phase::Mixed;
  const double act_b = dtype_bytes(act);
  const double kv_b = dtype_bytes(kv_dtype);
  const double hd = static_cast<double>(head_dim);
  const double qh = static_cast<double>(q_heads);
  const double kvh = static_cast<double>(kv_heads);
  const double t = static_cast<double>(tokens);
  const double h = static_cast<double>(hidden);

  Emitter e{nullptr, act, gemm_compute_dtype(weight_dtype), act_b, dtype_bytes(weight_dtype),
            phase};

  // --- first stage: embedding gather (read rows, write hidden states) ---
  e.out = &out.pre;
  e.push(OpKind::Embedding, "embedding", act, tokens, hidden, 0, 0.0, t * h * act_b * 2.0, phase);
  if (tp > 1) e.collective(OpKind::AllReduce, "embedding_all_reduce", tokens, hidden);

  // --- one transformer layer ---
  e.out = &out.per_layer;
  e.rms_norm("input_layernorm", tokens, hidden);
  e.gemm("qkv_proj", tokens, (q_heads + 2 * kv_heads) * head_dim, hidden);
  {
    // Rotates Q and K in place; reads the cos/sin cache once per token.
    const double elems = t * (qh + kvh) * hd;
    e.push(OpKind::Rope, "rotary_emb", act, tokens, (q_heads + kv_heads) * head_dim, 0, 3.0 * elems,
           (2.0 * elems + t * hd) * act_b, phase);
  }
  if (prefill_q > 0) {
    // FlashAttention causal: 2*head_dim FLOPs for QK^T and 2*head_dim for PV per pair and head.
    const double q = static_cast<double>(prefill_q);
    const double flops = 4.0 * qh * hd * static_cast<double>(prefill_pairs);
    const double bytes = 2.0 * q * qh * hd * act_b                                  // Q in, O out
                         + static_cast<double>(prefill_kv) * 2.0 * kvh * hd * kv_b  // K/V read
                         + q * 2.0 * kvh * hd * kv_b;                               // K/V write
    e.push(OpKind::AttentionPrefill, "attention_prefill", act, prefill_q, prefill_kv, head_dim,
           flops, bytes, Phase::Prefill);
  }
  if (decodes > 0) {
    // One query per sequence against its whole context; reading the KV cache dominates.
    const double d = static_cast<double>(decodes);
    const double ctx = static_cast<double>(decode_ctx);
    const double flops = 4.0 * qh * hd * ctx;
    const double bytes = ctx * 2.0 * kvh * hd * kv_b   // K/V read
                         + 2.0 * d * qh * hd * act_b   // Q in, O out
                         + d * 2.0 * kvh * hd * kv_b;  // new K/V write
    e.push(OpKind::AttentionDecode, "attention_decode", act, decodes, decode_ctx, head_dim, flops,
           bytes, Phase::Decode);
  }
  e.gemm("o_proj", tokens, hidden, q_heads * head_dim);
  if (tp > 1) e.collective(OpKind::AllReduce, "attn_all_reduce", tokens, hidden);
  e.add("attn_residual_add", tokens, hidden);
  e.rms_norm("post_attention_layernorm", tokens, hidden);
  const double act_elems = t * static_cast<double>(inter);
  if (model.gated_mlp) {
    e.gemm("gate_up_proj", tokens, 2 * inter, hidden);
    // silu(gate) * up: reads both halves, writes one; ~5 FLOPs per output (exp, add, div, mul).
    e.push(OpKind::SiluMul, "silu_mul", act, tokens, inter, 0, 5.0 * act_elems,
           3.0 * act_elems * act_b, phase);
  } else {
    e.gemm("up_proj", tokens, inter, hidden);
    // tanh-approximated GELU: ~8 FLOPs per element; read + write.
    e.push(OpKind::Gelu, "gelu", act, tokens, inter, 0, 8.0 * act_elems, 2.0 * act_elems * act_b,
           phase);
  }
  e.gemm("down_proj", tokens, hidden, inter);
  if (tp > 1) e.collective(OpKind::AllReduce, "mlp_all_reduce", tokens, hidden);
  e.add("mlp_residual_add", tokens, hidden);

  // --- last stage: final norm over all tokens, LM head and sampling only over sampled rows ---
  e.out = &out.post;
  e.rms_norm("final_layernorm", tokens, hidden);
  if (sampled > 0) {
    const double s = static_cast<double>(sampled);
    const double v = static_cast<double>(model.vocab_size);
    e.gemm("lm_head", sampled, vocab_shard, hidden);
    if (tp > 1) e.collective(OpKind::AllGather, "logits_all_gather", sampled, model.vocab_size);
    // fp32 logits: softmax/top-k/top-p passes, nominally one read and one write.
    e.push(OpKind::Sampling, "sampler", DType::FP32, sampled, model.vocab_size, 0, 5.0 * s * v,
           2.0 * s * v * 4.0, phase);
  }
}

}  // namespace ks::kernels
