#include "kernels/model_config.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/ascii.hpp"
#include "kernels/builtin_data.hpp"
#include "kernels/hf_config.hpp"

namespace ks::kernels {

namespace {

// Attention of one layer: Q/K/V/O (or MLA's down/up projections and their norms), biases, qk norms.
std::int64_t attention_parameters(const ModelConfig& m) {
  const std::int64_t h = m.hidden_size;
  std::int64_t attention = 0;
  if (m.is_mla()) {
    const std::int64_t heads = m.num_heads, qk = m.mla_qk_head_dim();
    const std::int64_t q = m.q_lora_rank > 0
                               ? h * m.q_lora_rank + m.q_lora_rank + std::int64_t{m.q_lora_rank} * heads * qk  // q_a, norm, q_b
                               : h * heads * qk;                                                              // q_proj
    const std::int64_t kv = h * m.mla_latent_dim() + m.kv_lora_rank  // kv_a_proj_with_mqa, kv_a_layernorm
                            + std::int64_t{m.kv_lora_rank} * heads * (m.qk_nope_head_dim + m.v_head_dim);  // kv_b
    attention = q + kv + heads * m.v_head_dim * h;  // + o_proj
  } else {
    const std::int64_t q_width = std::int64_t{m.num_heads} * m.head_dim;
    const std::int64_t kv_width = std::int64_t{m.num_kv_heads} * m.head_dim;
    attention = h * q_width         // q_proj
                + 2 * h * kv_width  // k_proj, v_proj
                + q_width * h;      // o_proj
    if (m.qkv_bias) attention += q_width + 2 * kv_width;
  }
  if (m.o_bias) attention += h;
  if (m.qk_norm) attention += 2 * std::int64_t{m.head_dim};  // q_norm, k_norm
  return attention;
}

// One MLP of width `inter` (gated: gate, up, down; plain: up, down), with its biases.
std::int64_t mlp_parameters(const ModelConfig& m, std::int64_t inter) {
  const std::int64_t h = m.hidden_size;
  std::int64_t mlp = (m.gated_mlp ? 3 : 2) * h * inter;
  if (m.mlp_bias) mlp += (m.gated_mlp ? 2 : 1) * inter + h;
  return mlp;
}

// A layer with `experts` of its routed experts counted (all, or experts_per_token for active).
std::int64_t layer_parameters(const ModelConfig& m, bool moe, std::int64_t experts) {
  const std::int64_t h = m.hidden_size;
  std::int64_t mlp = 0;
  if (moe) {
    mlp = mlp_parameters(m, m.expert_intermediate_size()) * experts + h * m.num_experts;  // experts + router
    if (m.shared_experts > 0)
      mlp += mlp_parameters(m, std::int64_t{m.shared_experts} * m.expert_intermediate_size());
  } else {
    mlp = mlp_parameters(m, m.intermediate_size);
  }
  const std::int64_t norm_params = m.norm == NormKind::LayerNorm ? 2 * h : h;  // weight (+ bias)
  const std::int64_t norms_per_layer = m.parallel_residual ? 1 : 2;
  return attention_parameters(m) + mlp + norms_per_layer * norm_params;
}

}  // namespace

bool ModelConfig::is_moe_layer(int layer) const {
  if (num_experts <= 0) return false;
  return !std::binary_search(dense_layers.begin(), dense_layers.end(), layer);
}

int ModelConfig::moe_layers() const {
  int n = 0;
  for (int i = 0; i < num_layers; ++i) n += is_moe_layer(i) ? 1 : 0;
  return n;
}

std::int64_t ModelConfig::layer_parameter_count() const {
  return layer_parameters(*this, num_experts > 0 && moe_layers() > 0, num_experts);
}

std::int64_t ModelConfig::layer_parameter_count(int layer) const {
  return layer_parameters(*this, is_moe_layer(layer), num_experts);
}

std::int64_t ModelConfig::routed_expert_parameter_count() const {
  if (num_experts <= 0) return 0;
  return std::int64_t{moe_layers()} * num_experts * mlp_parameters(*this, expert_intermediate_size());
}

std::int64_t ModelConfig::active_parameter_count() const {
  std::int64_t n = 0;
  for (int i = 0; i < num_layers; ++i) n += layer_parameters(*this, is_moe_layer(i), experts_per_token);
  // Embedding, LM head (once if tied), final norm: as parameter_count.
  return n + stage_parameter_count(0, true, true);
}

std::int64_t ModelConfig::stage_parameter_count(int layers, bool first, bool last) const {
  const std::int64_t h = hidden_size;
  const std::int64_t norm_params = norm == NormKind::LayerNorm ? 2 * h : h;
  // Layers of the first `layers` of the model when first, else of the last `layers` (an MoE model's
  // dense layers sit at the front); the same count for models whose layers are all alike.
  std::int64_t n = 0;
  if (dense_layers.empty()) {
    n = layer_parameter_count() * layers;
  } else {
    const int begin = first ? 0 : num_layers - layers;
    for (int i = begin; i < begin + layers; ++i) n += layer_parameter_count(i);
  }
  if (first) n += std::int64_t{vocab_size} * h;  // embedding
  // The last stage holds the LM head: its own matrix, or a copy of the tied embedding unless
  // it is also the first stage (vLLM builds embed_tokens there for tie_weights).
  if (last && (!tied_embeddings || !first)) n += std::int64_t{vocab_size} * h;
  if (last) n += (lm_head_bias ? vocab_size : 0) + norm_params;  // + final norm
  return n;
}

std::int64_t ModelConfig::parameter_count() const { return stage_parameter_count(num_layers, true, true); }

int ModelConfig::rotary_dim() const {
  if (is_mla()) return qk_rope_head_dim;
  return static_cast<int>(partial_rotary_factor * head_dim);
}

double ModelConfig::weight_element_bytes(DType dtype) const {
  const int b = weight_block(dtype);
  return dtype_bytes(dtype) + (b > 0 ? 4.0 / (static_cast<double>(b) * b) : 0.0);
}

double ModelConfig::weight_bytes(DType dtype) const {
  return static_cast<double>(parameter_count()) * dtype_bytes(dtype);
}

double ModelConfig::kv_bytes_per_token(DType kv) const {
  if (is_mla()) return static_cast<double>(num_layers) * mla_latent_dim() * dtype_bytes(kv);
  return 2.0 * num_layers * num_kv_heads * head_dim * dtype_bytes(kv);
}

void ModelConfig::validate() const {
  auto fail = [this](const std::string& what) {
    throw std::invalid_argument("model '" + name + "': " + what);
  };
  auto positive = [&](int value, const char* field) {
    if (value <= 0) fail(std::string(field) + " must be > 0, got " + std::to_string(value));
  };
  positive(num_layers, "num_layers");
  positive(hidden_size, "hidden_size");
  positive(num_heads, "num_heads");
  positive(num_kv_heads, "num_kv_heads");
  positive(head_dim, "head_dim");
  positive(intermediate_size, "intermediate_size");
  positive(vocab_size, "vocab_size");
  positive(max_position_embeddings, "max_position_embeddings");
  if (num_heads % num_kv_heads != 0) {
    fail("num_heads (" + std::to_string(num_heads) + ") must be a multiple of num_kv_heads (" +
         std::to_string(num_kv_heads) + ")");
  }
  if (num_experts < 0 || experts_per_token < 0) fail("expert counts must be >= 0");
  if (num_experts > 0 && (experts_per_token < 1 || experts_per_token > num_experts)) {
    fail("experts_per_token must be in [1, num_experts=" + std::to_string(num_experts) + "], got " +
         std::to_string(experts_per_token));
  }
  if (num_experts == 0 && experts_per_token != 0) {
    fail("experts_per_token set on a dense model (num_experts = 0)");
  }
  if (!(partial_rotary_factor > 0.0 && partial_rotary_factor <= 1.0)) {
    fail("partial_rotary_factor must be in (0, 1], got " + std::to_string(partial_rotary_factor));
  }
  if (sliding_window < 0) fail("sliding_window must be >= 0 (0 = full attention)");
  if (moe_intermediate_size < 0 || shared_experts < 0) fail("moe_intermediate_size and shared_experts must be >= 0");
  if (num_experts == 0 && (shared_experts > 0 || !dense_layers.empty()))
    fail("shared experts or dense layers set on a dense model (num_experts = 0)");
  for (std::size_t i = 0; i < dense_layers.size(); ++i) {
    if (dense_layers[i] < 0 || dense_layers[i] >= num_layers || (i > 0 && dense_layers[i] <= dense_layers[i - 1]))
      fail("dense_layers must be ascending layer indices in [0, " + std::to_string(num_layers) + ")");
  }
  if (num_experts > 0 && moe_layers() == 0) fail("every layer is dense: no MoE layer left");
  if (kv_lora_rank < 0 || q_lora_rank < 0) fail("kv_lora_rank and q_lora_rank must be >= 0");
  if (is_mla() && (qk_rope_head_dim <= 0 || qk_nope_head_dim <= 0 || v_head_dim <= 0))
    fail("MLA (kv_lora_rank > 0) needs qk_rope_head_dim, qk_nope_head_dim and v_head_dim > 0");
}

namespace {

// The shipped data/models/*.json files, embedded at build time and parsed on first use with the
// same loader users' files go through.
const std::vector<ModelConfig>& presets() {
  static const std::vector<ModelConfig> models = [] {
    std::vector<ModelConfig> out;
    for (const EmbeddedFile& file : builtin_model_files()) {
      out.push_back(parse_hf_config(file.text, "data/models/" + std::string(file.name) + ".json",
                                    file.name));
    }
    return out;
  }();
  return models;
}

}  // namespace

const ModelConfig* find_builtin_model(std::string_view name) {
  for (const ModelConfig& m : presets()) {
    if (ascii_iequals(m.name, name)) return &m;
  }
  return nullptr;
}

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const ModelConfig& m : presets()) names.push_back(m.name);
  return names;
}

}  // namespace ks::kernels
