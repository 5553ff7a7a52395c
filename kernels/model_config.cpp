#include "kernels/model_config.hpp"

#include <stdexcept>
#include <utility>

#include "kernels/ascii.hpp"

namespace ks::kernels {

std::int64_t ModelConfig::parameter_count() const {
  const std::int64_t h = hidden_size;
  const std::int64_t q_width = std::int64_t{num_heads} * head_dim;
  const std::int64_t kv_width = std::int64_t{num_kv_heads} * head_dim;
  const std::int64_t attention = h * q_width         // q_proj
                                 + 2 * h * kv_width  // k_proj, v_proj
                                 + q_width * h;      // o_proj
  const std::int64_t mlp_matrices = gated_mlp ? 3 : 2;
  std::int64_t mlp = mlp_matrices * h * intermediate_size;
  if (num_experts > 0) mlp = mlp * num_experts + h * num_experts;  // experts + router
  const std::int64_t per_layer = attention + mlp + 2 * h;          // + two norm weights
  const std::int64_t embeddings = std::int64_t{vocab_size} * h * (tied_embeddings ? 1 : 2);
  return embeddings + per_layer * num_layers + h;  // + final norm
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
}

namespace {

ModelConfig llama(std::string name, int layers, int hidden, int heads, int kv_heads,
                  int intermediate, int vocab, int max_pos) {
  ModelConfig m;
  m.name = std::move(name);
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_heads = heads;
  m.num_kv_heads = kv_heads;
  m.head_dim = hidden / heads;
  m.intermediate_size = intermediate;
  m.vocab_size = vocab;
  m.max_position_embeddings = max_pos;
  return m;
}

const std::vector<ModelConfig>& presets() {
  // Values from the config.json of each HF repository:
  // meta-llama/Llama-2-{7b,13b,70b}-hf, meta-llama/Meta-Llama-3-{8B,70B},
  // meta-llama/Llama-3.1-8B, mistralai/Mistral-7B-v0.1.
  static const std::vector<ModelConfig> models = {
      llama("llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 4096),
      llama("llama-2-13b", 40, 5120, 40, 40, 13824, 32000, 4096),
      llama("llama-2-70b", 80, 8192, 64, 8, 28672, 32000, 4096),
      llama("llama-3-8b", 32, 4096, 32, 8, 14336, 128256, 8192),
      llama("llama-3-70b", 80, 8192, 64, 8, 28672, 128256, 8192),
      llama("llama-3.1-8b", 32, 4096, 32, 8, 14336, 128256, 131072),
      llama("mistral-7b", 32, 4096, 32, 8, 14336, 32000, 32768),
  };
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
