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
  int num_experts = 0;  // 0 = dense MLP
  int experts_per_token = 0;
  int max_position_embeddings = 4096;

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

  // Dimensions of each head that rope rotates.
  int rotary_dim() const;
  // Embeddings, (untied) LM head, per layer Q/K/V/O + MLP (x num_experts plus router for MoE)
  // + norm weights (and biases for LayerNorm), final norm, and every bias the flags above enable.
  std::int64_t parameter_count() const;
  // One transformer layer's parameters (attention, MLP or experts and router, norms).
  std::int64_t layer_parameter_count() const;
  // A pipeline stage's: `layers` layers, the embedding on the first stage, the final norm and LM
  // head on the last (with tied embeddings a later last stage holds its own copy, as vLLM).
  std::int64_t stage_parameter_count(int layers, bool first, bool last) const;
  // All parameters stored in one dtype (norm weights are a rounding error at this scale).
  double weight_bytes(DType dtype) const;
  // KV cache for one token over all layers, K and V.
  double kv_bytes_per_token(DType kv) const;

  // Throws std::invalid_argument naming the model and the offending field.
  void validate() const;
};

// Presets with the values of the public HF config.json files; nullptr if unknown.
// Lookup is ASCII case-insensitive ("Llama-2-7b" finds "llama-2-7b").
const ModelConfig* find_builtin_model(std::string_view name);
std::vector<std::string> builtin_model_names();

}  // namespace ks::kernels
