#include "kernels/step_decomposer.hpp"

#include "kernels/kernel_builders.hpp"

#include "kernels/moe.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace ks::kernels {

DType activation_dtype(DType weight_dtype) {
  return weight_dtype == DType::FP32 ? DType::FP32 : DType::BF16;
}

DType gemm_compute_dtype(DType weight_dtype) {
  return weight_dtype == DType::INT4 ? activation_dtype(weight_dtype) : weight_dtype;
}

int layers_per_stage(int num_layers, int pp) { return (num_layers + pp - 1) / pp; }

LayerRange pp_stage_layers(int num_layers, int stage, int pp) {
  if (pp < 1 || pp > num_layers || stage < 0 || stage >= pp)
    throw std::invalid_argument("pipeline stage " + std::to_string(stage) + " of " + std::to_string(pp) + " over " +
                                std::to_string(num_layers) + " layers");
  // Stages pp-2, pp-3, ... take one extra layer each until the remainder is used up.
  const int base = num_layers / pp, extra = num_layers % pp;
  auto size = [&](int s) { return base + (s >= pp - 1 - extra && s < pp - 1 ? 1 : 0); };
  LayerRange r;
  for (int s = 0; s < stage; ++s) r.begin += size(s);
  r.end = r.begin + size(stage);
  return r;
}

int pp_stage_tensors(const ModelConfig& model) { return model.parallel_residual ? 1 : 2; }

double pp_send_bytes(const ModelConfig& model, std::int64_t tokens, DType weight_dtype, int tp) {
  return static_cast<double>(pp_stage_tensors(model)) * static_cast<double>(tokens) *
         static_cast<double>(model.hidden_size) * dtype_bytes(activation_dtype(weight_dtype)) / tp;
}

namespace {

using i64 = std::int64_t;

void check_parallel(const ModelConfig& model, const ParallelConfig& parallel) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("model '" + model.name +
                                "' with tp=" + std::to_string(parallel.tp) +
                                ", pp=" + std::to_string(parallel.pp) + ": " + what);
  };
  if (parallel.tp < 1 || parallel.pp < 1) fail("tp and pp must be >= 1");
  if (parallel.dp_attention) {
    // Attention, dense layers and shared experts are whole on every rank: no TP divisibility.
    if (model.num_experts == 0) fail("dp_attention needs a mixture-of-experts model (its experts are what the ranks split)");
    if (parallel.tp < 2) fail("dp_attention needs tp > 1 (the data-parallel attention ranks)");
    if (parallel.ep != parallel.tp)
      fail("dp_attention needs ep = tp (the experts expert-parallel over the same ranks), got ep=" +
           std::to_string(parallel.ep));
    if (parallel.pp != 1) fail("dp_attention with pipeline parallelism (pp > 1) is not modelled");
    if (parallel.pp > model.num_layers) fail("more pipeline stages than layers");
    if (!(parallel.moe_imbalance >= 1.0 && parallel.moe_imbalance <= parallel.ep))
      fail("moe imbalance (busiest rank's load / mean) must be in [1, ep=" + std::to_string(parallel.ep) + "], got " +
           std::to_string(parallel.moe_imbalance));
    return;
  }
  if (model.num_heads % parallel.tp != 0) fail("num_heads is not divisible by tp");
  if (model.intermediate_size % parallel.tp != 0) fail("intermediate_size is not divisible by tp");
  if (model.num_kv_heads % parallel.tp != 0 && parallel.tp % model.num_kv_heads != 0) {
    fail("num_kv_heads and tp must divide one another (KV heads are split or replicated)");
  }
  if (parallel.pp > model.num_layers) fail("more pipeline stages than layers");
  if (parallel.ep < 1) fail("ep must be >= 1");
  if (parallel.ep > 1 && model.num_experts == 0) fail("ep > 1 needs a mixture-of-experts model");
  if (parallel.ep > 1 && parallel.ep != parallel.tp)
    fail("ep=" + std::to_string(parallel.ep) +
         " must equal tp (experts are spread over the TP group, or over the data-parallel attention ranks with "
         "parallel.dp_attention)");
  if (!(parallel.moe_imbalance >= 1.0 && parallel.moe_imbalance <= parallel.ep))
    fail("moe imbalance (busiest rank's load / mean) must be in [1, ep=" + std::to_string(parallel.ep) + "], got " +
         std::to_string(parallel.moe_imbalance));
  if (model.num_experts > 0 && parallel.ep == 1 && model.expert_intermediate_size() % parallel.tp != 0)
    fail("moe_intermediate_size is not divisible by tp (experts are split by TP; or set ep = tp)");
  if (model.shared_experts > 0 && (model.shared_experts * model.expert_intermediate_size()) % parallel.tp != 0)
    fail("the shared experts' width is not divisible by tp");
}

// Collects the kernels of one list with the step-wide constants at hand.
struct Emitter {
  std::vector<Kernel>* out;
  DType act;      // activation / elementwise compute dtype
  DType gemm_dt;  // GEMM compute dtype
  double act_b;   // bytes per activation element
  double w_b;     // bytes per weight element (fp8 block scales included)
  Phase phase;
  // fp8 block-scaled weights: the block size (0: none). Every such GEMM's input is quantised to
  // fp8 per token group of `block` values first (fp8_act_quant) and read as fp8 plus scales.
  int block = 0;

  // Per-token-group activation quantisation of an [m x k] GEMM input: reads it (16-bit), writes
  // fp8 values and one fp32 scale per group of `block`; memory-bound, priced as an elementwise
  // kernel of the activation class.
  void act_quant(i64 m, i64 k) {
    const double elems = static_cast<double>(m) * static_cast<double>(k);
    const double groups = static_cast<double>(m) * static_cast<double>((k + block - 1) / block);
    push(OpKind::Gelu, "fp8_act_quant", act, m, k, 0, 3.0 * elems, elems * act_b + elems * 1.0 + groups * 4.0, phase);
  }
  // Bytes per input activation a GEMM reads: fp8 + its group scale when block-scaled.
  double gemm_in_b() const { return block > 0 ? 1.0 + 4.0 / block : act_b; }

  void push(OpKind op, const char* name, DType dt, i64 m, i64 n, i64 k, double flops, double bytes,
            Phase ph, i64 groups = 1) {
    out->push_back(Kernel{op, name, dt, m, n, k, flops, bytes, ph, groups});
  }
  // Kernels with the shared FLOP/byte conventions of kernel_builders.hpp, stamped with the phase.
  void emit(Kernel k) {
    if (k.phase == Phase::Mixed) k.phase = phase;
    out->push_back(k);
  }
  // [m x k] activations times [k x n] weights (kernel_builders.hpp).
  void gemm(const char* name, i64 m, i64 n, i64 k, bool bias = false) {
    if (block > 0) act_quant(m, k);
    Kernel g = make_gemm(name, m, n, k, gemm_dt, act_b, w_b, 1, bias);
    g.bytes += static_cast<double>(m) * static_cast<double>(k) * (gemm_in_b() - act_b);
    g.quantised_input = block > 0;
    emit(g);
  }
  // Grouped expert GEMM: `rows` routed rows (summed over experts) through one [k x n] matrix per
  // expert; only the `touched` experts' weights are read (expected count, see kernels/moe.hpp).
  void moe_gemm(const char* name, i64 rows, i64 n, i64 k, double touched, bool bias) {
    const double r = static_cast<double>(rows), nd = static_cast<double>(n),
                 kd = static_cast<double>(k);
    const i64 groups = std::max<i64>(1, std::llround(touched));
    push(OpKind::MoeGemm, name, gemm_dt, rows, n, k, 2.0 * r * nd * kd + (bias ? r * nd : 0.0),
         (block > 0 ? r * kd * gemm_in_b() + r * nd * act_b : (r * kd + r * nd) * act_b) +
             touched * (nd * kd + (bias ? nd : 0.0)) * w_b,
         phase, groups);
    out->back().quantised_input = block > 0;
  }
  // RMSNorm or LayerNorm, as the model uses.
  void norm(NormKind kind, const char* name, i64 tokens, i64 width) {
    if (kind == NormKind::RmsNorm) {
      rms_norm(name, tokens, width);
      return;
    }
    emit(make_layer_norm(name, tokens, width, act));
  }
  void rms_norm(const char* name, i64 tokens, i64 width) { emit(make_rms_norm(name, tokens, width, act)); }
  void add(const char* name, i64 tokens, i64 width) { emit(make_add(name, tokens, width, act)); }
  // Collective over the TP group: bytes = full tensor per rank; no FLOPs priced here.
  void collective(OpKind op, const char* name, i64 tokens, i64 width) {
    const double elems = static_cast<double>(tokens) * static_cast<double>(width);
    push(op, name, act, tokens, width, 0, 0.0, elems * act_b, phase);
  }
};

// Mixture of experts as vLLM's fused_moe runs it (experts sharded by TP like a dense MLP):
// router GEMM -> top-k softmax and sort by expert -> grouped gate/up GEMM over the routed rows
// (tokens x top_k) -> SiLU-and-mul -> grouped down GEMM -> weighted sum of each token's k rows.
// Expert weights are read only for the experts the step touches (expected count under uniform
// routing); on average each of them sees tokens * top_k / touched rows.
//
// Expert parallelism (ep > 1, ep = tp): every rank holds ceil(E / ep) whole experts (round-robin)
// and routes its share of the tokens (ceil(tokens / ep), the slice a reduce-scatter would leave
// it): top-k over that slice, all-to-all dispatch of its routed rows to the experts' ranks,
// grouped GEMMs over the rows the busiest rank receives (imbalance x tokens x top_k / ep), all-to-all
// combine back, the weighted sum; the caller then all-gathers the slices (instead of the
// all-reduce). Shared experts (DeepSeek) are a dense gated MLP over every token: split by TP
// without EP, whole over the rank's slice with it.
//
// Under attention data parallelism (parallel.dp_attention) the rank routes its own sequences'
// tokens (`rank_tokens`, the busiest rank's), the experts' rows come from the replica's
// `all_tokens`, and each rank keeps the combined rows of its own tokens (no all-gather).
void emit_moe(Emitter& e, const ModelConfig& model, const ParallelConfig& parallel, i64 all_tokens, i64 rank_tokens) {
  const i64 hidden = model.hidden_size;
  const i64 experts = model.num_experts;
  const int ep = parallel.ep;
  const i64 tokens = rank_tokens;  // routed by this rank
  const i64 rows = tokens * model.experts_per_token;
  const double t = static_cast<double>(tokens), r = static_cast<double>(rows);
  const double h = static_cast<double>(hidden), ex = static_cast<double>(experts);
  const i64 inter = ep > 1 ? model.expert_intermediate_size() : model.expert_intermediate_size() / parallel.tp;
  // Rows through this rank's experts, and how many of its experts the step touches.
  i64 expert_rows = rows;
  double touched = expected_experts_touched(model.num_experts, model.experts_per_token, all_tokens);
  if (ep > 1) {
    expert_rows = static_cast<i64>(std::ceil(parallel.moe_imbalance * static_cast<double>(all_tokens) *
                                             model.experts_per_token / ep - 1e-9));
    const double local = static_cast<double>((experts + ep - 1) / ep);
    touched = std::min(touched * local / ex, static_cast<double>(std::max<i64>(expert_rows, 1)));
  }

  // The gate is tiny and stays in 16-bit under weight quantisation (vLLM does not quantise it);
  // it is replicated on every TP rank.
  e.push(OpKind::Gemm, "router", e.act, tokens, experts, hidden, 2.0 * t * ex * h,
         (t * h + t * ex) * e.act_b + ex * h * e.act_b, e.phase);
  // Softmax over the logits, top-k ids and weights (fp32 + int32), then the routed rows sorted
  // by expert (int32 ids read and written).
  e.push(OpKind::MoeTopK, "moe_topk", e.act, tokens, experts, model.experts_per_token, 5.0 * t * ex,
         t * ex * e.act_b + r * 8.0 + r * 8.0, e.phase);
  // The busiest rank's buffer (what it receives sets the exchange's time): bf16 rows of hidden.
  const double a2a_bytes = static_cast<double>(expert_rows) * h * e.act_b;
  // fp8 block-scaled experts: the rank's tokens are quantised once before the routed rows are
  // formed (vLLM's fused_moe quantises its input; DeepEP before dispatch, which then still moves
  // 16-bit rows here: fp8 dispatch is not modelled), the SiLU output before the down GEMM.
  if (e.block > 0) e.act_quant(tokens, hidden);
  if (ep > 1) e.push(OpKind::AllToAll, "moe_dispatch", e.act, expert_rows, hidden, 0, 0.0, a2a_bytes, e.phase);
  e.moe_gemm("experts_gate_up", expert_rows, 2 * inter, hidden, touched, model.mlp_bias);
  const double act_elems = static_cast<double>(expert_rows) * static_cast<double>(inter);
  e.push(OpKind::SiluMul, "silu_mul", e.act, expert_rows, inter, 0, 5.0 * act_elems,
         3.0 * act_elems * e.act_b, e.phase);
  if (e.block > 0) e.act_quant(expert_rows, inter);
  e.moe_gemm("experts_down", expert_rows, hidden, inter, touched, model.mlp_bias);
  if (ep > 1) e.push(OpKind::AllToAll, "moe_combine", e.act, expert_rows, hidden, 0, 0.0, a2a_bytes, e.phase);
  // k expert outputs per token (already scaled by their routing weights) summed into one row.
  e.push(OpKind::MoeSum, "moe_sum", e.act, tokens, hidden, model.experts_per_token, r * h,
         (r * h + t * h) * e.act_b, e.phase);
  if (model.shared_experts > 0) {
    const i64 shared = static_cast<i64>(model.shared_experts) * model.expert_intermediate_size() / (ep > 1 ? 1 : parallel.tp);
    e.gemm("shared_gate_up", tokens, 2 * shared, hidden);
    e.emit(make_silu_mul("shared_silu_mul", tokens, shared, e.act));
    e.gemm("shared_down", tokens, hidden, shared);
  }
}

// Keys a prefill chunk reads and the (query, key) pairs it scores. Query at position p attends to
// keys max(0, p - window + 1) .. p (window 0: all of them), as vLLM's FlashAttention with
// window_size = (sliding_window - 1, 0).
struct WindowedPrefill {
  i64 keys, pairs;
};
WindowedPrefill windowed_prefill(const PrefillChunk& c, i64 window) {
  const i64 first = c.cached + 1, last = c.cached + c.tokens;  // 1-based positions of the queries
  if (window <= 0 || last <= window) return {last, c.tokens * c.cached + c.tokens * (c.tokens + 1) / 2};
  // Queries up to position `window` see all earlier keys; later ones see `window` keys each.
  const i64 below = std::max<i64>(window - first + 1, 0);
  const i64 pairs = below * (first + window) / 2 + (c.tokens - below) * window;
  return {std::min(last, c.tokens + window - 1), pairs};
}


// Every sum of the batch the kernels need, in one pass; throws on invalid entries.
struct BatchSums {
  i64 prefill_seqs = 0;   // prefill chunks (one sequence each)
  i64 prefill_q = 0;      // query tokens of all prefill chunks
  i64 prefill_kv = 0;     // keys each chunk reads: cached + new
  i64 prefill_pairs = 0;  // causal (query, key) pairs: chunk*cached + chunk*(chunk+1)/2
  i64 decodes = 0;
  i64 decode_ctx = 0;  // keys the decodes read
  i64 sampled = 0;     // rows that reach the LM head
  // Speculative verification (decode_queries given): query tokens of the decodes and the
  // (query, key) pairs they score; both equal decodes / decode_ctx with one query each.
  i64 decode_q = 0, decode_pairs = 0;
  bool multi_query = false;
  i64 tokens() const { return prefill_q + decode_q; }
  Phase phase() const { return prefill_q == 0 ? Phase::Decode : decodes == 0 ? Phase::Prefill : Phase::Mixed; }
};

BatchSums sum_batch(const ModelConfig& model, const StepBatch& batch,
                    const std::vector<std::int64_t>* decode_queries = nullptr) {
  BatchSums s;
  s.decodes = static_cast<i64>(batch.decode_contexts.size());
  s.sampled = s.decodes;
  for (const PrefillChunk& chunk : batch.prefills) {
    if (chunk.tokens < 1 || chunk.cached < 0) {
      throw std::invalid_argument("prefill chunk needs tokens >= 1 and cached >= 0, got tokens=" +
                                  std::to_string(chunk.tokens) +
                                  ", cached=" + std::to_string(chunk.cached));
    }
    ++s.prefill_seqs;
    s.prefill_q += chunk.tokens;
    const WindowedPrefill w = windowed_prefill(chunk, model.sliding_window);
    s.prefill_kv += w.keys;
    s.prefill_pairs += w.pairs;
    if (chunk.last_chunk) ++s.sampled;
  }
  // Branch-free (the check after the loop) so that it vectorises: it runs every step over every decode.
  const i64 window = model.sliding_window > 0 ? model.sliding_window : std::numeric_limits<i64>::max();
  i64 lowest = 1;
  for (std::int64_t ctx : batch.decode_contexts) {
    lowest = std::min<i64>(lowest, ctx);
    s.decode_ctx += std::min<i64>(ctx, window);
  }
  if (lowest < 1) {
    const std::int64_t bad = *std::find_if(batch.decode_contexts.begin(), batch.decode_contexts.end(),
                                           [](std::int64_t ctx) { return ctx < 1; });
    throw std::invalid_argument("decode context must be >= 1 (it includes the new token), got " + std::to_string(bad));
  }
  s.decode_q = s.decodes;
  s.decode_pairs = s.decode_ctx;
  if (decode_queries == nullptr) return s;
  if (decode_queries->size() != batch.decode_contexts.size())
    throw std::invalid_argument("decode_queries has " + std::to_string(decode_queries->size()) + " entries for " +
                                std::to_string(batch.decode_contexts.size()) + " decodes");
  // Sequence i's query j (0-based) sees context_i + j keys (at most the window); the kernel
  // reads the keys of the sequence's last query once.
  s.decode_q = s.decode_ctx = s.decode_pairs = 0;
  for (std::size_t i = 0; i < batch.decode_contexts.size(); ++i) {
    const i64 q = (*decode_queries)[i], ctx = batch.decode_contexts[i];
    if (q < 1) throw std::invalid_argument("decode queries must be >= 1, got " + std::to_string(q));
    if (q > 1) s.multi_query = true;
    s.decode_q += q;
    s.decode_ctx += std::min<i64>(ctx, window) + q - 1;
    for (i64 j = 0; j < q; ++j) s.decode_pairs += std::min<i64>(ctx + j, window);
  }
  s.sampled += s.decode_q - s.decodes;
  return s;
}

// FlashAttention causal prefill and paged decode (kernel_builders.hpp for FLOPs and bytes).
void emit_attention(Emitter& e, const ModelConfig& model, int tp, const BatchSums& s, DType kv_dtype) {
  const i64 q_heads = model.num_heads / tp;
  if (model.is_mla()) {
    // Naive MLA for prefill, absorbed MLA for decode (kernel_builders.hpp); the latent cache is
    // whole on every TP rank, the heads are split.
    if (s.prefill_q > 0) {
      e.emit(make_mla_attention_prefill("attention_prefill", s.prefill_seqs, s.prefill_q, s.prefill_kv, s.prefill_pairs,
                                        q_heads, model.mla_qk_head_dim(), model.v_head_dim, model.mla_latent_dim(),
                                        e.act, kv_dtype));
    }
    if (s.decodes > 0) {
      e.emit(make_mla_attention_decode("attention_decode", s.decodes, s.decode_q, s.decode_ctx, s.decode_pairs, q_heads,
                                       model.mla_latent_dim(), model.kv_lora_rank, e.act, kv_dtype));
    }
    return;
  }
  // vLLM replicates KV heads when there are fewer than ranks: one per rank.
  const i64 kv_heads = model.num_kv_heads >= tp ? model.num_kv_heads / tp : 1;
  if (s.prefill_q > 0) {
    e.emit(make_attention_prefill("attention_prefill", s.prefill_seqs, s.prefill_q, s.prefill_kv, s.prefill_pairs, q_heads, kv_heads,
                                  model.head_dim, e.act, kv_dtype));
  }
  if (s.decodes > 0 && s.multi_query) {
    e.emit(make_attention_verify("attention_decode", s.decodes, s.decode_q, s.decode_ctx, s.decode_pairs, q_heads,
                                 kv_heads, model.head_dim, e.act, kv_dtype));
  } else if (s.decodes > 0) {
    e.emit(make_attention_decode("attention_decode", s.decodes, s.decode_ctx, q_heads, kv_heads, model.head_dim, e.act,
                                 kv_dtype));
  }
}

// MLA's projections around attention (DeepSeek-V2/V3 as vLLM runs them): the fused down-projection
// of the query and the KV latent (replicated on every TP rank), their RMSNorms, the query
// up-projection (split by heads); prefill up-projects every key's latent to K and V (kv_b_proj,
// over the keys read); decode multiplies each head's nope query into the latent space (W_UK,
// one [nope x kv_lora_rank] matrix per head) and the latent output back to v_head_dim (W_UV).
void emit_mla(Emitter& e, const ModelConfig& model, int tp, const BatchSums& s, DType kv_dtype) {
  const i64 tokens = s.tokens(), hidden = model.hidden_size, q_heads = model.num_heads / tp;
  const i64 qk = model.mla_qk_head_dim(), latent = model.mla_latent_dim(), lora = model.kv_lora_rank;
  if (model.q_lora_rank > 0) {
    e.gemm("qkv_a_proj", tokens, model.q_lora_rank + latent, hidden);
    e.rms_norm("q_a_layernorm", tokens, model.q_lora_rank);
    e.rms_norm("kv_a_layernorm", tokens, lora);
    e.gemm("q_b_proj", tokens, q_heads * qk, model.q_lora_rank);
  } else {
    e.gemm("q_proj", tokens, q_heads * qk, hidden);
    e.gemm("kv_a_proj", tokens, latent, hidden);
    e.rms_norm("kv_a_layernorm", tokens, lora);
  }
  e.emit(make_rope("rotary_emb", tokens, q_heads, 1, model.qk_rope_head_dim, e.act));
  if (s.prefill_q > 0)
    e.gemm("kv_b_proj", s.prefill_kv, q_heads * (model.qk_nope_head_dim + model.v_head_dim), lora);
  if (s.decodes > 0)
    e.emit(make_gemm("q_absorb", s.decode_q, lora, model.qk_nope_head_dim, e.gemm_dt, e.act_b, e.w_b, q_heads));
  emit_attention(e, model, tp, s, kv_dtype);
  if (s.decodes > 0)
    e.emit(make_gemm("v_up", s.decode_q, model.v_head_dim, lora, e.gemm_dt, e.act_b, e.w_b, q_heads));
  e.gemm("o_proj", tokens, hidden, q_heads * model.v_head_dim, model.o_bias);
}

// One transformer layer in execution order; `moe` picks routed experts or the dense MLP.
//
// Under attention data parallelism `sums` is the busiest rank's share and `all_tokens` the
// replica's tokens (the MoE's rows): attention, dense MLP and shared experts run whole (tp 1)
// with no all-reduce, and the MoE output needs no all-gather.
void emit_layer(Emitter& e, const ModelConfig& model, const ParallelConfig& parallel, const BatchSums& sums,
                i64 all_tokens, DType kv_dtype, bool moe) {
  const bool dp = parallel.dp_attention;
  const int tp = dp ? 1 : parallel.tp;
  const i64 tokens = sums.tokens();
  const i64 hidden = model.hidden_size;
  const i64 head_dim = model.head_dim;
  const i64 q_heads = model.num_heads / tp;
  // vLLM replicates KV heads when there are fewer than ranks: one per rank.
  const i64 kv_heads = model.num_kv_heads >= tp ? model.num_kv_heads / tp : 1;
  const i64 inter = model.intermediate_size / tp;
  const DType act = e.act;

  e.norm(model.norm, "input_layernorm", tokens, hidden);
  if (model.is_mla()) {
    emit_mla(e, model, tp, sums, kv_dtype);
  } else {
    e.gemm("qkv_proj", tokens, (q_heads + 2 * kv_heads) * head_dim, hidden, model.qkv_bias);
    if (model.qk_norm) e.rms_norm("qk_norm", tokens, (q_heads + kv_heads) * head_dim);
    e.emit(make_rope("rotary_emb", tokens, q_heads, kv_heads, model.rotary_dim(), act));
    emit_attention(e, model, tp, sums, kv_dtype);
    e.gemm("o_proj", tokens, hidden, q_heads * head_dim, model.o_bias);
  }
  if (tp > 1) e.collective(OpKind::AllReduce, "attn_all_reduce", tokens, hidden);
  // A parallel block (Phi) feeds the MLP from the same normed input as attention.
  if (!model.parallel_residual) {
    e.add("attn_residual_add", tokens, hidden);
    e.norm(model.norm, "post_attention_layernorm", tokens, hidden);
  }
  const bool expert_parallel = moe && parallel.ep > 1;
  if (moe) {
    const i64 routed = dp ? tokens : parallel.ep > 1 ? (tokens + parallel.ep - 1) / parallel.ep : tokens;
    emit_moe(e, model, parallel, dp ? all_tokens : tokens, routed);
  } else {
    if (model.gated_mlp) {
      e.gemm("gate_up_proj", tokens, 2 * inter, hidden, model.mlp_bias);
      e.emit(make_silu_mul("silu_mul", tokens, inter, act));
    } else {
      e.gemm("up_proj", tokens, inter, hidden, model.mlp_bias);
      e.emit(make_gelu("gelu", tokens, inter, act));
    }
    e.gemm("down_proj", tokens, hidden, inter, model.mlp_bias);
  }
  // Under EP each rank holds the MoE output of its token slice: gather the slices.
  if (expert_parallel && !dp) {
    e.collective(OpKind::AllGather, "moe_all_gather", tokens, hidden);
  } else if (tp > 1) {
    e.collective(OpKind::AllReduce, "mlp_all_reduce", tokens, hidden);
  }
  if (model.parallel_residual) {
    // residual + attention + MLP in one fused elementwise pass: three reads, one write.
    const double elems = static_cast<double>(tokens) * static_cast<double>(hidden);
    e.push(OpKind::Add, "residual_add", act, tokens, hidden, 0, 2.0 * elems, 4.0 * elems * e.act_b, e.phase);
  } else {
    e.add("mlp_residual_add", tokens, hidden);
  }
}

// One step's kernels as plain vectors, before they become a StepKernels' chunks.
struct StepDraft {
  std::vector<Kernel> pre, layer, post;
  std::vector<Kernel> dense;  // an MoE model's dense layer (one); empty when every layer is alike
  int num_layers = 0;
};

StepDraft& draft_scratch() {
  thread_local StepDraft draft;
  return draft;
}

ChunkPtr chunk_of(const Kernel* first, const Kernel* last, ChunkPool* pool) {
  if (first == last) return nullptr;  // a list drops empty chunks
  return pool != nullptr ? pool->make(first, last) : make_chunk(first, last);
}

ChunkPtr chunk_of(const std::vector<Kernel>& kernels, ChunkPool* pool) {
  return chunk_of(kernels.data(), kernels.data() + kernels.size(), pool);
}

constexpr std::size_t kNoChunk = static_cast<std::size_t>(-1);

void rename(std::vector<Kernel>& kernels, const char* (*name)(const char*)) {
  if (name != nullptr)
    for (Kernel& k : kernels) k.name = name(k.name);
}

bool is_attention(const Kernel& k) { return k.op == OpKind::AttentionPrefill || k.op == OpKind::AttentionDecode; }

// One layer's kernels as up to three chunks: before attention, attention, after attention (the
// attention kernels are contiguous). Returns the attention chunk's index, or kNoChunk without one.
std::size_t set_layer(const std::vector<Kernel>& layer, ChunkPool* pool, KernelList& out) {
  out.clear();
  const Kernel* begin = layer.data();
  const Kernel* end = begin + layer.size();
  const Kernel* first = std::find_if(begin, end, is_attention);
  const Kernel* last = std::find_if_not(first, end, is_attention);
  out.append(chunk_of(begin, first, pool));
  const std::size_t index = first == last ? kNoChunk : out.chunks().size();
  out.append(chunk_of(first, last, pool));
  out.append(chunk_of(last, end, pool));
  return index;
}

// Dense layers of an MoE model within `range` go, in order, to the stage's pre list (after the
// embedding); per_layer, repeated num_layers times, is then the range's MoE layers.
void place_dense_layers(const ModelConfig& model, const ChunkPtr& dense_layer, LayerRange range, StepKernels& stage) {
  int dense = 0;
  for (int i = range.begin; i < range.end; ++i) dense += model.is_moe_layer(i) ? 0 : 1;
  for (int i = 0; i < dense; ++i) stage.pre.append(dense_layer);
  stage.num_layers = range.count() - dense;
}

}  // namespace

void dp_rank_batch(const StepBatch& batch, const std::vector<std::int64_t>* decode_queries, int ranks, StepBatch& out,
                   std::vector<std::int64_t>* out_queries) {
  if (ranks < 1) throw std::invalid_argument("dp_rank_batch needs ranks >= 1, got " + std::to_string(ranks));
  if (decode_queries != nullptr && decode_queries->size() != batch.decode_contexts.size())
    throw std::invalid_argument("decode_queries has " + std::to_string(decode_queries->size()) + " entries for " +
                                std::to_string(batch.decode_contexts.size()) + " decodes");
  thread_local std::vector<i64> load, keys;
  thread_local std::vector<int> prefill_rank, decode_rank;
  thread_local std::vector<std::size_t> order;
  load.assign(static_cast<std::size_t>(ranks), 0);
  keys.assign(static_cast<std::size_t>(ranks), 0);
  auto least = [&] {
    std::size_t best = 0;
    for (std::size_t r = 1; r < load.size(); ++r)
      if (load[r] < load[best]) best = r;
    return best;
  };
  // Prefill chunks, largest first (batch order on ties), then decodes in batch order.
  order.resize(batch.prefills.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return batch.prefills[a].tokens > batch.prefills[b].tokens; });
  prefill_rank.assign(batch.prefills.size(), 0);
  for (std::size_t i : order) {
    const std::size_t r = least();
    prefill_rank[i] = static_cast<int>(r);
    load[r] += batch.prefills[i].tokens;
    keys[r] += batch.prefills[i].cached + batch.prefills[i].tokens;
  }
  decode_rank.assign(batch.decode_contexts.size(), 0);
  for (std::size_t i = 0; i < batch.decode_contexts.size(); ++i) {
    const std::size_t r = least();
    decode_rank[i] = static_cast<int>(r);
    load[r] += decode_queries != nullptr ? (*decode_queries)[i] : 1;
    keys[r] += batch.decode_contexts[i];
  }
  std::size_t busiest = 0;
  for (std::size_t r = 1; r < load.size(); ++r)
    if (load[r] > load[busiest] || (load[r] == load[busiest] && keys[r] > keys[busiest])) busiest = r;
  out.prefills.clear();
  out.decode_contexts.clear();
  if (out_queries != nullptr) out_queries->clear();
  for (std::size_t i = 0; i < batch.prefills.size(); ++i)
    if (prefill_rank[i] == static_cast<int>(busiest)) out.prefills.push_back(batch.prefills[i]);
  for (std::size_t i = 0; i < batch.decode_contexts.size(); ++i) {
    if (decode_rank[i] != static_cast<int>(busiest)) continue;
    out.decode_contexts.push_back(batch.decode_contexts[i]);
    if (out_queries != nullptr) out_queries->push_back(decode_queries != nullptr ? (*decode_queries)[i] : 1);
  }
}

StepKernels decompose_step(const ModelConfig& model, const StepBatch& batch, DType weight_dtype,
                           DType kv_dtype, const ParallelConfig& parallel) {
  StepKernels out;
  decompose_step(model, batch, weight_dtype, kv_dtype, parallel, out);
  return out;
}

void decompose_step(const ModelConfig& model, const StepBatch& batch, DType weight_dtype,
                    DType kv_dtype, const ParallelConfig& parallel, StepKernels& out) {
  decompose_step(model, batch, nullptr, weight_dtype, kv_dtype, parallel, out);
}

namespace {

// One step's kernels into `out` (cleared), an MoE model's dense layers not placed.
void build_step(const ModelConfig& model, const StepBatch& batch, const std::vector<std::int64_t>* decode_queries,
                DType weight_dtype, DType kv_dtype, const ParallelConfig& parallel, StepDraft& out) {
  out.pre.clear();
  out.layer.clear();
  out.post.clear();
  out.dense.clear();
  model.validate();
  check_parallel(model, parallel);
  out.num_layers = layers_per_stage(model.num_layers, parallel.pp);

  // Under attention data parallelism the kernels are those of the busiest rank's share; the MoE
  // layers' expert rows still come from every rank's tokens.
  const BatchSums full = sum_batch(model, batch, decode_queries);
  BatchSums sums = full;
  if (parallel.dp_attention && full.tokens() > 0) {
    thread_local StepBatch rank_batch;
    thread_local std::vector<std::int64_t> rank_queries;
    dp_rank_batch(batch, decode_queries, parallel.tp, rank_batch, decode_queries != nullptr ? &rank_queries : nullptr);
    sums = sum_batch(model, rank_batch, decode_queries != nullptr ? &rank_queries : nullptr);
  }
  const i64 tokens = sums.tokens();
  if (tokens == 0) return;

  const int tp = parallel.dp_attention ? 1 : parallel.tp;
  const i64 hidden = model.hidden_size;
  const i64 vocab_shard = (static_cast<i64>(model.vocab_size) + tp - 1) / tp;

  const DType act = activation_dtype(weight_dtype);
  const Phase phase = full.phase();
  const double act_b = dtype_bytes(act);

  Emitter e{nullptr, act, gemm_compute_dtype(weight_dtype), act_b, model.weight_element_bytes(weight_dtype),
            phase, model.weight_block(weight_dtype)};

  // --- first stage: embedding gather (read rows, write hidden states) ---
  e.out = &out.pre;
  e.emit(make_embedding("embedding", tokens, hidden, act));
  if (tp > 1) e.collective(OpKind::AllReduce, "embedding_all_reduce", tokens, hidden);

  // --- one transformer layer (an MoE layer of an MoE model); dense layers of an MoE model ---
  e.out = &out.layer;
  emit_layer(e, model, parallel, sums, full.tokens(), kv_dtype, model.num_experts > 0);
  if (!model.dense_layers.empty()) {
    e.out = &out.dense;
    emit_layer(e, model, parallel, sums, full.tokens(), kv_dtype, false);
  }

  // --- last stage: final norm over all tokens, LM head and sampling only over sampled rows ---
  e.out = &out.post;
  e.norm(model.norm, "final_layernorm", tokens, hidden);
  if (sums.sampled > 0) {
    const double s = static_cast<double>(sums.sampled);
    const double v = static_cast<double>(model.vocab_size);
    e.gemm("lm_head", sums.sampled, vocab_shard, hidden, model.lm_head_bias);
    if (tp > 1) e.collective(OpKind::AllGather, "logits_all_gather", sums.sampled, model.vocab_size);
    // fp32 logits: softmax/top-k/top-p passes, nominally one read and one write.
    e.push(OpKind::Sampling, "sampler", DType::FP32, sums.sampled, model.vocab_size, 0, 5.0 * s * v,
           2.0 * s * v * 4.0, phase);
  }
}

// The draft as a one-stage step (the first stage's dense layers placed); returns the attention
// chunk's index in out.per_layer (kNoChunk: none).
std::size_t assemble(const ModelConfig& model, const StepDraft& draft, int pp, ChunkPool* pool, StepKernels& out) {
  out.pre.clear();
  out.pre.append(chunk_of(draft.pre, pool));
  const std::size_t attention = set_layer(draft.layer, pool, out.per_layer);
  out.post.clear();
  out.post.append(chunk_of(draft.post, pool));
  out.num_layers = draft.num_layers;
  // An MoE model's dense layers: those of the first stage (all of them without pipelining).
  if (!draft.dense.empty() && !draft.layer.empty())
    place_dense_layers(model, chunk_of(draft.dense, pool), pp_stage_layers(model.num_layers, 0, pp), out);
  return attention;
}

}  // namespace

void decompose_step(const ModelConfig& model, const StepBatch& batch, const std::vector<std::int64_t>* decode_queries,
                    DType weight_dtype, DType kv_dtype, const ParallelConfig& parallel, StepKernels& out) {
  StepDraft& draft = draft_scratch();
  build_step(model, batch, decode_queries, weight_dtype, kv_dtype, parallel, draft);
  assemble(model, draft, parallel.pp, nullptr, out);
}

StepDecomposer::StepDecomposer(ModelConfig model, DType weight_dtype, DType kv_dtype, ParallelConfig parallel)
    : model_(std::move(model)), weight_dtype_(weight_dtype), kv_dtype_(kv_dtype), parallel_(parallel) {}

const StepKernels& StepDecomposer::decompose(const StepBatch& batch) { return decompose(batch, nullptr); }

const StepKernels& StepDecomposer::decompose(const StepBatch& batch, const std::vector<std::int64_t>* decode_queries) {
  const BatchSums sums = sum_batch(model_, batch, decode_queries);
  const i64 tokens = sums.tokens();
  // An MoE model's dense layers sit in `pre` (not refilled here); MLA's prefill up-projection
  // depends on the keys read: both rebuild every step.
  // Under attention data parallelism the busiest rank's share moves from step to step: no reuse.
  const bool reusable = model_.dense_layers.empty() && !(model_.is_mla() && sums.prefill_q > 0) &&
                        !parallel_.dp_attention;
  if (reusable && tokens > 0 &&
      ((tokens == tokens_ && sums.sampled == sampled_ && sums.phase() == phase_) ||
       recall(tokens, sums.sampled, sums.phase()))) {
    // The same kernels but attention (whose count the phase fixes): a new attention chunk.
    if (attention_chunk_ == kNoChunk) return out_;
    const DType act = activation_dtype(weight_dtype_);
    out_.per_layer.replace(attention_chunk_, attention_pool_.make_by([&](std::vector<Kernel>& attention) {
      Emitter e{&attention, act, gemm_compute_dtype(weight_dtype_), dtype_bytes(act),
                model_.weight_element_bytes(weight_dtype_), phase_, model_.weight_block(weight_dtype_)};
      emit_attention(e, model_, parallel_.tp, sums, kv_dtype_);
      rename(attention, name_);
    }));
    return out_;
  }
  tokens_ = 0;  // no reuse after a throw
  StepDraft& draft = draft_scratch();
  build_step(model_, batch, decode_queries, weight_dtype_, kv_dtype_, parallel_, draft);
  for (auto* list : {&draft.pre, &draft.layer, &draft.post, &draft.dense}) rename(*list, name_);
  attention_chunk_ = assemble(model_, draft, parallel_.pp, &pool_, out_);
  tokens_ = tokens;
  sampled_ = sums.sampled;
  phase_ = sums.phase();
  if (reusable && tokens > 0 && phase_ == Phase::Decode) {
    Build& b = builds_[static_cast<std::size_t>(tokens) % builds_.size()];
    b.tokens = tokens;
    b.sampled = sampled_;
    b.kernels = out_;
    b.attention_chunk = attention_chunk_;
  }
  return out_;
}

// The build of this shape, if still held, becomes the current one (its attention is then replaced).
bool StepDecomposer::recall(std::int64_t tokens, std::int64_t sampled, Phase phase) {
  if (phase != Phase::Decode) return false;
  const Build& b = builds_[static_cast<std::size_t>(tokens) % builds_.size()];
  if (b.tokens != tokens || b.sampled != sampled) return false;
  out_ = b.kernels;
  attention_chunk_ = b.attention_chunk;
  tokens_ = tokens;
  sampled_ = sampled;
  phase_ = phase;
  return true;
}

void decompose_stages(const ModelConfig& model, const StepBatch& batch, DType weight_dtype, DType kv_dtype,
                      const ParallelConfig& parallel, std::vector<StepKernels>& out, ChunkPool* pool) {
  out.resize(static_cast<std::size_t>(parallel.pp));
  StepDraft& draft = draft_scratch();
  build_step(model, batch, nullptr, weight_dtype, kv_dtype, parallel, draft);
  StepKernels& first = out.front();
  if (parallel.pp == 1) {
    assemble(model, draft, 1, pool, first);
    return;
  }
  first.pre.clear();
  first.pre.append(chunk_of(draft.pre, pool));
  set_layer(draft.layer, pool, first.per_layer);
  const ChunkPtr dense = draft.dense.empty() || draft.layer.empty() ? nullptr : chunk_of(draft.dense, pool);
  const i64 tokens = batch.num_tokens();
  for (int s = 0; s < parallel.pp; ++s) {
    StepKernels& stage = out[static_cast<std::size_t>(s)];
    stage.post.clear();
    if (s > 0) {
      stage.pre.clear();
      stage.per_layer = first.per_layer;
      // Each rank received 1/tp of the activations: the stage's TP group gathers them.
      if (parallel.tp > 1 && tokens > 0) {
        const DType act = activation_dtype(weight_dtype);
        const i64 width = static_cast<i64>(pp_stage_tensors(model)) * model.hidden_size;
        const Phase phase = first.per_layer.empty() ? Phase::Mixed : first.per_layer.front().phase;
        const Kernel gather{OpKind::AllGather, "pp_recv_all_gather", act, tokens, width, 0, 0.0,
                            static_cast<double>(tokens) * static_cast<double>(width) * dtype_bytes(act), phase, 1};
        stage.pre.append(chunk_of(&gather, &gather + 1, pool));
      }
    }
    if (s == parallel.pp - 1) stage.post.append(chunk_of(draft.post, pool));
    stage.num_layers = pp_stage_layers(model.num_layers, s, parallel.pp).count();
    if (dense != nullptr) place_dense_layers(model, dense, pp_stage_layers(model.num_layers, s, parallel.pp), stage);
  }
}

}  // namespace ks::kernels
