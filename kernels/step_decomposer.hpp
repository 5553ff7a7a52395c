#pragma once
// Turns one engine step (a batch of prefill chunks and decodes) into the kernels one GPU runs.
//
// Conventions (vLLM-like decoder: Llama family, Phi-style parallel blocks, Mixtral-style MoE):
// * Activations are 16-bit (bf16/fp16, 2 bytes) whatever the weight dtype; fp32 weights imply
//   fp32 activations. Attention, norms and elementwise kernels compute in the activation dtype.
// * GEMMs compute in the weight dtype (fp8/int8 = W8A8 tensor-core GEMMs), except int4, which is
//   weight-only quantisation dequantised into a 16-bit GEMM. GEMM input activations are still
//   counted at 2 bytes (the quantised copy of the input is not modelled).
// * fp8 block-scaled weights (ModelConfig::weight_block_size > 0 with fp8 weights): weight bytes
//   per element include the fp32 block scales (ModelConfig::weight_element_bytes), and each GEMM
//   (not the router) is preceded by fp8_act_quant, the per-token-group quantisation of its input,
//   which it then reads as fp8 plus one fp32 scale per group (docs/serving.md).
// * The LM head (tied or not) uses the weight dtype like every other matrix.
// * Bytes are HBM traffic (reads + writes) assuming each operand crosses HBM once; FLOPs of
//   elementwise kernels are nominal (they are memory-bound on every GPU of interest).
// * Tensor parallelism follows Megatron/vLLM: QKV and gate/up split by columns, O and down by
//   rows followed by an all-reduce; KV heads are replicated when tp > num_kv_heads; the
//   vocab-parallel embedding ends in an all-reduce and the LM-head logits are gathered.
// * Pipeline parallelism follows vLLM: stage s runs a contiguous block of layers
//   (pp_stage_layers), the first stage the embedding, the last the final norm, LM head and
//   sampling. The activations a stage hands on (hidden states, plus the residual stream unless
//   the block is parallel) are not kernels: each TP rank sends 1/tp of them to the same rank of
//   the next stage over the interconnect, and under TP the receiving stage starts with an
//   all-gather that reassembles them (vLLM's send_tensor_dict / recv_tensor_dict with
//   all_gather_group).
// * Norms follow the model (RMSNorm or LayerNorm). A parallel block (Phi) has one norm per
//   layer, attention and MLP read the same normed input and one fused add sums residual,
//   attention and MLP. Biases add one vector read and one add per GEMM output.
// * MoE layers replace the MLP by router GEMM, top-k, two grouped expert GEMMs (OpKind::MoeGemm;
//   weights of the expected number of touched experts, kernels/moe.hpp), SiLU-and-mul over the
//   routed rows and the weighted sum (see emit_moe in the .cpp). Shared experts (DeepSeek) add a
//   dense gated MLP (shared_gate_up, shared_silu_mul, shared_down).
// * An MoE model with dense layers (DeepSeek's first_k_dense_replace, Qwen3-MoE's mlp_only_layers)
//   puts per_layer = one MoE layer, num_layers = the stage's MoE layers, and the stage's dense
//   layers' kernels, in order, in `pre` after the embedding (or after pp_recv_all_gather).
//   decompose_step with pp > 1 places those of the first stage.
// * Expert parallelism (parallel.ep = tp > 1): each rank holds ceil(E/ep) whole experts and routes
//   ceil(T/ep) tokens; moe_dispatch and moe_combine are all-to-alls (OpKind::AllToAll) of the
//   busiest rank's rows, ceil(imbalance x T x k / ep) of them, which also set the grouped GEMMs'
//   M; moe_all_gather reassembles the tokens instead of mlp_all_reduce.
// * Attention data parallelism (parallel.dp_attention; MoE models, ep = tp > 1, pp = 1; SGLang's
//   --enable-dp-attention --enable-dp-lm-head --moe-dense-tp-size 1 with DeepEP, vLLM's DP
//   attention + EP): the step's sequences are dealt to the tp ranks (dp_rank_batch) and the
//   kernels are the busiest rank's: embedding, attention (all heads, the whole KV of its own
//   sequences), dense layers, shared experts, LM head and sampler over its own tokens, unsharded
//   and with no all-reduce or logits gather; the MoE layers route its tokens, dispatch and
//   combine by all-to-all, and price the experts' rows from the replica's tokens
//   (ceil(imbalance x T x k / ep)); no moe_all_gather. Every rank waiting for the busiest one at
//   each all-to-all is what padding to it amounts to, so the step time is its kernels' time.
// * MLA (DeepSeek-V2/V3, kv_lora_rank > 0): qkv_a_proj (fused q/kv down-projection, replicated),
//   q_a/kv_a RMSNorms, q_b_proj (heads split by TP), rope over qk_rope_head_dim; prefill: kv_b_proj
//   up-projects the latent of every key read, then FlashAttention with q/k head nope + rope and
//   v_head_dim (naive MLA); decode: q_absorb (per-head W_UK), attention over the cached latent
//   shared by all heads (absorbed MLA, make_mla_attention_decode), v_up (per-head W_UV); o_proj.
// * Sliding-window attention (Mistral's `sliding_window`): a query scores and reads at most
//   `window` keys (itself included), in prefill and in decode. The KV cache still holds the
//   whole context (the serving KV manager allocates it; see docs/kernel-model.md).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/dtype.hpp"
#include "kernels/kernel.hpp"
#include "kernels/model_config.hpp"
#include "kernels/step.hpp"
#include "kernels/step_kernels.hpp"

namespace ks::kernels {

// Throws std::invalid_argument for invalid model/parallel configs or batch entries
// (tokens < 1, cached < 0, decode context < 1). An empty batch yields no kernels.
StepKernels decompose_step(const ModelConfig& model, const StepBatch& batch, DType weight_dtype,
                           DType kv_dtype, const ParallelConfig& parallel = {});

// Same, into `out`.
void decompose_step(const ModelConfig& model, const StepBatch& batch, DType weight_dtype,
                    DType kv_dtype, const ParallelConfig& parallel, StepKernels& out);

// Speculative decoding's verification step: decode sequence i carries (*decode_queries)[i]
// query tokens (its last token and its drafts) instead of one; decode_contexts[i] still counts
// the keys its first query sees (itself included), query j sees j more. Every query is a token
// through the dense layers and a row of the LM head and sampler (GEMM M = sum of the queries);
// attention reads each sequence's KV once (make_attention_verify). nullptr: one query each,
// exactly the overload above.
void decompose_step(const ModelConfig& model, const StepBatch& batch, const std::vector<std::int64_t>* decode_queries,
                    DType weight_dtype, DType kv_dtype, const ParallelConfig& parallel, StepKernels& out);

// decompose_step over a run's consecutive steps for one model and configuration. A step with
// the same token count, sampled rows and phase as the previous one has the same kernels except
// attention (the context lengths move), so only those are rebuilt, into a new chunk: the other
// chunks stay the same objects (kernel_list.hpp), so a decode-heavy run neither rebuilds nor
// compares its GEMMs. Chunks come from a pool of their own: no allocation per step.
class StepDecomposer {
 public:
  StepDecomposer(ModelConfig model, DType weight_dtype, DType kv_dtype, ParallelConfig parallel = {});
  // The kernels of `batch`, valid until the next call. Throws as decompose_step.
  const StepKernels& decompose(const StepBatch& batch);
  // With several queries per decode (speculative verification; see decompose_step).
  const StepKernels& decompose(const StepBatch& batch, const std::vector<std::int64_t>* decode_queries);
  // Every kernel this decomposer makes is named `name(its usual name)` (a static string; e.g. a
  // speculative proposer's "draft_" kernels), so that renamed steps still share their chunks.
  void set_kernel_names(const char* (*name)(const char*)) { name_ = name; }

 private:
  ModelConfig model_;
  DType weight_dtype_, kv_dtype_;
  ParallelConfig parallel_;
  StepKernels out_;
  // Attention's chunks (one new per step, free again two steps later) apart from the others
  // (held while the batch size stays): a pool's search then finds a free buffer at once.
  ChunkPool pool_, attention_pool_;
  const char* (*name_)(const char*) = nullptr;
  // What the kernels outside attention depend on, as of the last full build (tokens 0: none).
  std::int64_t tokens_ = 0, sampled_ = 0;
  Phase phase_ = Phase::Mixed;
  std::size_t attention_chunk_ = 0;  // its index in out_.per_layer's chunks (-1: none)
  // Recent decode-only builds by token count (direct-mapped): as requests join and leave, decode
  // batches return to sizes seen a few steps before, whose kernels outside attention are then
  // taken from here instead of being built again. Mixed steps rarely repeat a token count. Four:
  // with the chunks in flight, what they hold still fits pool_ (more made its search and heap
  // allocations cost more than the builds saved).
  struct Build {
    std::int64_t tokens = 0, sampled = 0;
    StepKernels kernels;
    std::size_t attention_chunk = 0;
  };
  std::array<Build, 4> builds_;
  bool recall(std::int64_t tokens, std::int64_t sampled, Phase phase);
};

// Attention data parallelism: `batch`'s sequences dealt to `ranks` ranks, and in `out` the
// busiest rank's share. A sequence (prefill chunk or decode) stays whole on one rank; prefill
// chunks (largest first, batch order on ties), then decodes (batch order), each go to the rank
// with the fewest tokens so far (the lowest index on ties): the even split a balancing DP
// scheduler aims for. The busiest rank has the most tokens (ties: the most keys read, then the
// lowest index). With decode_queries (speculative verification) a decode weighs its queries and
// out_queries gets the busiest rank's. Throws std::invalid_argument if ranks < 1.
void dp_rank_batch(const StepBatch& batch, const std::vector<std::int64_t>* decode_queries, int ranks, StepBatch& out,
                   std::vector<std::int64_t>* out_queries = nullptr);

// Dtype of activations for a given weight dtype (see conventions above).
DType activation_dtype(DType weight_dtype);
// Dtype a GEMM with these weights computes in (selects its peak FLOP/s).
DType gemm_compute_dtype(DType weight_dtype);
// Layers on the busiest pipeline stage; vLLM gives the remainder to single extra layers.
int layers_per_stage(int num_layers, int pp);

// Layers [begin, end) of pipeline stage `stage` of `pp` (vLLM's get_pp_indices): num_layers / pp
// each, and the remainder one extra layer each on the stages just before the last one (the
// first and last stages also hold the embedding and the LM head). Throws std::invalid_argument
// unless 0 <= stage < pp <= num_layers.
struct LayerRange {
  int begin = 0, end = 0;
  int count() const { return end - begin; }
};
LayerRange pp_stage_layers(int num_layers, int stage, int pp);

// Tensors handed from stage to stage: hidden states and residual (one for a parallel block).
int pp_stage_tensors(const ModelConfig& model);
// Bytes one TP rank sends to the same rank of the next stage for a step of `tokens` tokens.
double pp_send_bytes(const ModelConfig& model, std::int64_t tokens, DType weight_dtype, int tp);

// The step's kernels split into parallel.pp stages (out[s] for stage s; see the conventions
// above). With pp = 1 it is decompose_step. The stages share the layer's chunks; new chunks come
// from `pool` (null: allocated).
void decompose_stages(const ModelConfig& model, const StepBatch& batch, DType weight_dtype, DType kv_dtype,
                      const ParallelConfig& parallel, std::vector<StepKernels>& out, ChunkPool* pool = nullptr);

}  // namespace ks::kernels
