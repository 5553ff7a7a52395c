#pragma once
// Shape of a decoder-only transformer, enough to derive every kernel of a serving step.
// Field names follow the HF config.json keys they come from (kernels/hf_config.hpp fills them).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.hpp"

namespace ks::kernels {

// Normalisation layer: Llama-style RMSNorm (weight only) or LayerNorm (weight and bias, Phi).
enum class NormKind { RmsNorm, LayerNorm };

struct ModelConfig {
  std::string name;
  std::string architecture;   // HF "architectures"[0], e.g. "LlamaForCausalLM" (informational)
  int num_layers = 0;         // num_hidden_layers
  int hidden_size = 0;        // hidden_size
  int num_heads = 0;          // num_attention_heads
  int num_kv_heads = 0;       // num_key_value_heads (== num_heads without GQA)
  int head_dim = 0;           // head_dim, usually hidden_size / num_heads
  int intermediate_size = 0;  // MLP hidden size (per expert for MoE)
  int vocab_size = 0;
  bool gated_mlp = true;  // SwiGLU: gate and up projections, then SiLU(gate) * up
  bool tied_embeddings = false;
  int num_experts = 0;  // 0 = dense MLP (routed experts: n_routed_experts / num_experts / num_local_experts)
  int experts_per_token = 0;
  // Width of one routed expert's MLP (moe_intermediate_size); 0: intermediate_size (Mixtral).
  int moe_intermediate_size = 0;
  // Shared experts (DeepSeek n_shared_experts): a dense gated MLP of shared_experts x
  // moe_intermediate_size every token goes through beside its routed experts.
  int shared_experts = 0;
  // Layers of an MoE model that keep a dense MLP of intermediate_size (DeepSeek's
  // first_k_dense_replace / moe_layer_freq, Qwen3-MoE's mlp_only_layers / decoder_sparse_step),
  // 0-based, ascending. Empty: every layer is MoE (when num_experts > 0).
  std::vector<int> dense_layers;
  // Multi-head latent attention (DeepSeek-V2/V3; kv_lora_rank > 0 turns it on): the KV cache holds
  // one kv_lora_rank latent plus one qk_rope_head_dim rope key per token and layer, shared by all
  // heads. q_lora_rank 0: queries projected directly (V2-Lite).
  int kv_lora_rank = 0;
  int q_lora_rank = 0;
  int qk_rope_head_dim = 0;
  int qk_nope_head_dim = 0;
  int v_head_dim = 0;
  // Qwen3: RMSNorm over each query and key head before rope (q_norm, k_norm of head_dim weights).
  bool qk_norm = false;
  int max_position_embeddings = 4096;
  // fp8 weights with one fp32 scale per weight_block_size x weight_block_size block (DeepSeek-V3's
  // quantization_config {quant_method: fp8, weight_block_size: [128, 128]}); 0: per-tensor
  // scales. Used only when the weights are served in fp8 (weight_element_bytes, step_decomposer).
  int weight_block_size = 0;

  NormKind norm = NormKind::RmsNorm;
  std::string hidden_act = "silu";  // HF hidden_act; gated MLPs use SiLU, plain ones GELU
  // Phi/GPT-J block: attention and MLP both read one normed input and their outputs are added
  // to the residual together (one norm per layer instead of two).
  bool parallel_residual = false;
  bool qkv_bias = false;      // Qwen, Phi, InternLM with bias
  bool o_bias = false;        // attention output projection
  bool mlp_bias = false;      // every MLP matrix (per expert for MoE)
  bool lm_head_bias = false;  // Phi
  // Fraction of head_dim that is rotated (Phi-2: 0.4 -> 32 of 80 dims).
  double partial_rotary_factor = 1.0;
  double rope_theta = 10000.0;
  // Mistral's sliding-window attention span (0 = full attention): attention kernels read at most
  // this many keys per query (step_decomposer.hpp).
  int sliding_window = 0;

  // Dimensions of each head that rope rotates (MLA: qk_rope_head_dim).
  int rotary_dim() const;
  bool is_mla() const { return kv_lora_rank > 0; }
  // Routed-expert MLP width (moe_intermediate_size, else intermediate_size).
  int expert_intermediate_size() const { return moe_intermediate_size > 0 ? moe_intermediate_size : intermediate_size; }
  // Whether 0-based layer `layer` has routed experts (false for every layer of a dense model).
  bool is_moe_layer(int layer) const;
  // Layers with routed experts / with a dense MLP (num_layers - moe_layers()).
  int moe_layers() const;
  // MLA: per-head query/key width (nope + rope) and the latent a token caches per layer.
  int mla_qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  int mla_latent_dim() const { return kv_lora_rank + qk_rope_head_dim; }
  // Embeddings, (untied) LM head, per layer Q/K/V/O + MLP (x num_experts plus router for MoE)
  // + norm weights (and biases for LayerNorm), final norm, and every bias the flags above enable.
  std::int64_t parameter_count() const;
  // One transformer layer's parameters (attention, MLP or experts and router, norms): an MoE
  // layer of an MoE model (its first MoE layer), else a dense one.
  std::int64_t layer_parameter_count() const;
  // The routed experts' parameters over all MoE layers (what expert parallelism splits; the
  // router, shared experts and everything else are not counted).
  std::int64_t routed_expert_parameter_count() const;
  // Layer `layer`'s (0-based): dense or MoE as is_moe_layer says.
  std::int64_t layer_parameter_count(int layer) const;
  // Parameters one token goes through: as parameter_count but with experts_per_token routed
  // experts per MoE layer (plus shared experts and router), the embedding row counted whole as
  // the published "activated parameters" count it.
  std::int64_t active_parameter_count() const;
  // A pipeline stage's: `layers` layers, the embedding on the first stage, the final norm and LM
  // head on the last (with tied embeddings a later last stage holds its own copy, as vLLM).
  std::int64_t stage_parameter_count(int layers, bool first, bool last) const;
  // All parameters stored in one dtype (norm weights are a rounding error at this scale).
  double weight_bytes(DType dtype) const;
  // KV cache for one token over all layers, K and V (MLA: the latent and rope key).
  double kv_bytes_per_token(DType kv) const;
  // How many of `tp` tensor-parallel ranks share the KV cache of a token: tp (KV heads are split
  // over the ranks), 1 for MLA (the latent is replicated on every rank, as vLLM does). A rank
  // caches kv_bytes_per_token / kv_cache_split(tp) per token.
  int kv_cache_split(int tp) const { return is_mla() ? 1 : tp; }

  // Bytes one weight element takes in HBM in `dtype`: dtype_bytes, plus 4 / block^2 for the fp32
  // block scales when dtype is fp8 and weight_block_size > 0.
  double weight_element_bytes(DType dtype) const;
  // The block size in force for weights of `dtype` (weight_block_size for fp8, else 0).
  int weight_block(DType dtype) const { return dtype == DType::FP8 ? weight_block_size : 0; }
  // Throws std::invalid_argument naming the model and the offending field.
  void validate() const;
};

// Presets with the values of the public HF config.json files; nullptr if unknown.
// Lookup is ASCII case-insensitive ("Llama-2-7b" finds "llama-2-7b").
const ModelConfig* find_builtin_model(std::string_view name);
std::vector<std::string> builtin_model_names();

}  // namespace ks::kernels
