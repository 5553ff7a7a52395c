#include "kernels/model_config.hpp"

#include <stdexcept>

#include "kernels/ascii.hpp"
#include "kernels/builtin_data.hpp"
#include "kernels/hf_config.hpp"

namespace ks::kernels {

std::int64_t ModelConfig::layer_parameter_count() const {
  const std::int64_t h = hidden_size;
  const std::int64_t inter = intermediate_size;
  const std::int64_t q_width = std::int64_t{num_heads} * head_dim;
  const std::int64_t kv_width = std::int64_t{num_kv_heads} * head_dim;
  std::int64_t attention = h * q_width         // q_proj
                           + 2 * h * kv_width  // k_proj, v_proj
                           + q_width * h;      // o_proj
  if (qkv_bias) attention += q_width + 2 * kv_width;
  if (o_bias) attention += h;
  // Gated: gate and up (h -> inter each) and down; plain: up and down.
  std::int64_t mlp = (gated_mlp ? 3 : 2) * h * inter;
  if (mlp_bias) mlp += (gated_mlp ? 2 : 1) * inter + h;
  if (num_experts > 0) mlp = mlp * num_experts + h * num_experts;  // experts + router
  const std::int64_t norm_params = norm == NormKind::LayerNorm ? 2 * h : h;  // weight (+ bias)
  const std::int64_t norms_per_layer = parallel_residual ? 1 : 2;
  return attention + mlp + norms_per_layer * norm_params;
}

std::int64_t ModelConfig::stage_parameter_count(int layers, bool first, bool last) const {
  const std::int64_t h = hidden_size;
  const std::int64_t norm_params = norm == NormKind::LayerNorm ? 2 * h : h;
  std::int64_t n = layer_parameter_count() * layers;
  if (first) n += std::int64_t{vocab_size} * h;  // embedding
  // The last stage holds the LM head: its own matrix, or a copy of the tied embedding unless
  // it is also the first stage (vLLM builds embed_tokens there for tie_weights).
  if (last && (!tied_embeddings || !first)) n += std::int64_t{vocab_size} * h;
  if (last) n += (lm_head_bias ? vocab_size : 0) + norm_params;  // + final norm
  return n;
}

std::int64_t ModelConfig::parameter_count() const { return stage_parameter_count(num_layers, true, true); }

int ModelConfig::rotary_dim() const {
  return static_cast<int>(partial_rotary_factor * head_dim);
}

double ModelConfig::weight_bytes(DType dtype) const {
  return static_cast<double>(parameter_count()) * dtype_bytes(dtype);
}

double ModelConfig::kv_bytes_per_token(DType kv) const {
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
