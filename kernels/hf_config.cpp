#include "kernels/hf_config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "kernels/spec_error.hpp"

namespace ks::kernels {
namespace {

using nlohmann::json;

enum class Family { Llama, Mistral, Mixtral, Qwen2, Qwen3, Qwen3Moe, DeepSeek, Phi, InternLM, InternLM2, QWen };

struct Arch {
  const char* name;        // "architectures"[0]
  const char* model_type;  // fallback when "architectures" is absent
  Family family;
};

constexpr Arch kArchs[] = {
    {"LlamaForCausalLM", "llama", Family::Llama},
    {"MistralForCausalLM", "mistral", Family::Mistral},
    {"MixtralForCausalLM", "mixtral", Family::Mixtral},
    {"Qwen2ForCausalLM", "qwen2", Family::Qwen2},
    {"Qwen3ForCausalLM", "qwen3", Family::Qwen3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", Family::Qwen3Moe},
    {"DeepseekV2ForCausalLM", "deepseek_v2", Family::DeepSeek},
    {"DeepseekV3ForCausalLM", "deepseek_v3", Family::DeepSeek},
    {"PhiForCausalLM", "phi", Family::Phi},
    {"InternLMForCausalLM", "internlm", Family::InternLM},
    {"InternLM2ForCausalLM", "internlm2", Family::InternLM2},
    {"QWenLMHeadModel", "qwen", Family::QWen},
};

// Typed access to the top-level keys with messages naming file and key. A JSON null counts as
// absent, as transformers treats it ("rope_scaling": null).
class Reader {
 public:
  Reader(const json& j, const std::string& origin) : j_(j), origin_(origin) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw SpecError(origin_, key, what);
  }
  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  const json& at(const char* key) const { return j_.at(key); }

  int positive_int(const char* key) const {
    if (!has(key)) fail(key, "missing (expected a positive integer)");
    return positive_value(key);
  }
  int positive_int_or(const char* key, int fallback) const {
    return has(key) ? positive_value(key) : fallback;
  }
  int non_negative_int_or(const char* key, int fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > kIntMax) {
      fail(key, "expected a non-negative integer, got " + v.dump());
    }
    return v.get<int>();
  }
  // A list of non-negative integers below `bound` (empty when absent).
  std::vector<int> index_list_or_empty(const char* key, int bound) const {
    std::vector<int> out;
    if (!has(key)) return out;
    const json& v = j_.at(key);
    if (!v.is_array()) fail(key, "expected a list of layer indices, got " + v.dump());
    for (const json& e : v) {
      if (!e.is_number_integer() || e.get<long long>() < 0 || e.get<long long>() >= bound)
        fail(key, "expected layer indices in [0, " + std::to_string(bound) + "), got " + e.dump());
      out.push_back(e.get<int>());
    }
    return out;
  }
  double number_or(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) fail(key, "expected a number, got " + v.dump());
    return v.get<double>();
  }
  bool flag_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_boolean()) fail(key, "expected true or false, got " + v.dump());
    return v.get<bool>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_string()) fail(key, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }

 private:
  static constexpr long long kIntMax = 1LL << 30;
  int positive_value(const char* key) const {
    const json& v = j_.at(key);
    // 4096.0 is accepted (some exporters write floats); 4096.5 and "4096" are not.
    const bool integral = v.is_number_integer() ||
                          (v.is_number_float() && v.get<double>() == static_cast<long long>(v.get<double>()));
    if (!integral || v.get<double>() < 1 || v.get<double>() > kIntMax) {
      fail(key, "expected a positive integer, got " + v.dump());
    }
    return static_cast<int>(v.get<double>());
  }
  const json& j_;
  const std::string& origin_;
};

const Arch& find_arch(const Reader& r) {
  if (r.has("architectures")) {
    const json& list = r.at("architectures");
    if (!list.is_array() || list.empty() || !list.at(0).is_string()) {
      r.fail("architectures", "expected a list of class names, got " + list.dump());
    }
    const std::string name = list.at(0).get<std::string>();
    for (const Arch& a : kArchs) {
      if (name == a.name) return a;
    }
    std::string known;
    for (const Arch& a : kArchs) known += (known.empty() ? "" : ", ") + std::string(a.name);
    r.fail("architectures", "unsupported architecture '" + name + "' (supported: " + known + ")");
  }
  const std::string type = r.string_or("model_type", "");
  for (const Arch& a : kArchs) {
    if (type == a.model_type) return a;
  }
  r.fail("architectures", "missing, and model_type '" + type + "' is not a supported family");
}

// Routed experts and top-k, shared by the MoE families: `experts_key` routed experts (absent or
// null: a dense model), num_experts_per_tok of them per token, moe_intermediate_size wide.
bool read_routed_experts(const Reader& r, const char* experts_key, ModelConfig& m) {
  if (!r.has(experts_key)) return false;
  m.num_experts = r.positive_int(experts_key);
  m.experts_per_token = r.positive_int("num_experts_per_tok");
  if (m.experts_per_token > m.num_experts) {
    r.fail("num_experts_per_tok", "must not exceed " + std::string(experts_key) + " (" +
                                      std::to_string(m.num_experts) + "), got " + std::to_string(m.experts_per_token));
  }
  m.moe_intermediate_size = r.positive_int("moe_intermediate_size");
  return true;
}

// Qwen3-MoE: layer i has experts unless listed in mlp_only_layers or (i + 1) % decoder_sparse_step
// != 0 (transformers' Qwen3MoeDecoderLayer); those keep a dense MLP of intermediate_size.
void read_qwen3_moe(const Reader& r, ModelConfig& m) {
  if (!read_routed_experts(r, "num_experts", m)) r.fail("num_experts", "missing (expected a positive integer)");
  const int step = r.positive_int_or("decoder_sparse_step", 1);
  const std::vector<int> mlp_only = r.index_list_or_empty("mlp_only_layers", m.num_layers);
  for (int i = 0; i < m.num_layers; ++i) {
    const bool listed = std::find(mlp_only.begin(), mlp_only.end(), i) != mlp_only.end();
    if (listed || (i + 1) % step != 0) m.dense_layers.push_back(i);
  }
  if (static_cast<int>(m.dense_layers.size()) == m.num_layers)
    r.fail(r.has("mlp_only_layers") ? "mlp_only_layers" : "decoder_sparse_step", "leaves no MoE layer");
}

// DeepSeek-V2/V3: multi-head latent attention, and (when n_routed_experts is set) routed plus
// shared experts on layer i >= first_k_dense_replace with i % moe_layer_freq == 0
// (DeepseekV3DecoderLayer); the first layers keep a dense MLP of intermediate_size.
void read_deepseek(const Reader& r, ModelConfig& m) {
  if (r.flag_or("attention_bias", false)) r.fail("attention_bias", "true is not supported with MLA");
  m.kv_lora_rank = r.positive_int("kv_lora_rank");
  m.q_lora_rank = r.has("q_lora_rank") ? r.positive_int("q_lora_rank") : 0;  // null: direct q_proj (V2-Lite)
  m.qk_rope_head_dim = r.positive_int("qk_rope_head_dim");
  m.qk_nope_head_dim = r.positive_int("qk_nope_head_dim");
  m.v_head_dim = r.positive_int("v_head_dim");
  // Every head has its own keys after the up-projection: no GQA; head_dim is the q/k head.
  m.num_kv_heads = m.num_heads;
  m.head_dim = m.mla_qk_head_dim();
  if (!read_routed_experts(r, "n_routed_experts", m)) return;
  m.shared_experts = r.non_negative_int_or("n_shared_experts", 0);
  const int first_dense = r.non_negative_int_or("first_k_dense_replace", 0);
  const int freq = r.positive_int_or("moe_layer_freq", 1);
  for (int i = 0; i < m.num_layers; ++i) {
    if (i < first_dense || i % freq != 0) m.dense_layers.push_back(i);
  }
  if (static_cast<int>(m.dense_layers.size()) == m.num_layers)
    r.fail("first_k_dense_replace", "leaves no MoE layer (num_hidden_layers = " + std::to_string(m.num_layers) + ")");
}

// Llama and its descendants: SwiGLU MLP, RMSNorm, rope over the whole head.
void read_llama_like(const Reader& r, Family family, ModelConfig& m) {
  m.intermediate_size = r.positive_int("intermediate_size");
  m.num_kv_heads = r.positive_int_or("num_key_value_heads", m.num_heads);
  m.hidden_act = r.string_or("hidden_act", "silu");
  if (m.hidden_act != "silu" && m.hidden_act != "swish") {
    r.fail("hidden_act", "expected \"silu\" (a gated SiLU MLP) for " + m.architecture + ", got \"" +
                             m.hidden_act + "\"");
  }
  m.rope_theta = r.number_or("rope_theta", 10000.0);
  switch (family) {
    case Family::Llama:
      m.qkv_bias = m.o_bias = r.flag_or("attention_bias", false);
      m.mlp_bias = r.flag_or("mlp_bias", false);
      break;
    case Family::Mistral:
      m.sliding_window = r.non_negative_int_or("sliding_window", 0);
      break;
    case Family::Mixtral:
      m.sliding_window = r.non_negative_int_or("sliding_window", 0);
      m.num_experts = r.positive_int("num_local_experts");
      m.experts_per_token = r.positive_int("num_experts_per_tok");
      if (m.experts_per_token > m.num_experts) {
        r.fail("num_experts_per_tok", "must not exceed num_local_experts (" +
                                          std::to_string(m.num_experts) + "), got " +
                                          std::to_string(m.experts_per_token));
      }
      break;
    case Family::Qwen2:
      m.qkv_bias = true;  // Qwen2 always has Q/K/V biases (no config key)
      if (r.flag_or("use_sliding_window", false)) {
        m.sliding_window = r.non_negative_int_or("sliding_window", 0);
      }
      break;
    case Family::Qwen3:
    case Family::Qwen3Moe:
      m.qkv_bias = r.flag_or("attention_bias", false);
      m.qk_norm = true;  // q_norm / k_norm over each head
      if (r.flag_or("use_sliding_window", false)) {
        m.sliding_window = r.non_negative_int_or("sliding_window", 0);
      }
      if (family == Family::Qwen3Moe) read_qwen3_moe(r, m);
      break;
    case Family::DeepSeek:
      read_deepseek(r, m);
      break;
    case Family::InternLM:
    case Family::InternLM2:
      // transformers' InternLM(2)Config defaults `bias` to true: Q/K/V and O projections.
      m.qkv_bias = m.o_bias = r.flag_or("bias", true);
      break;
    default:
      break;
  }
}

// Phi-1/1.5/2 (transformers-native format): LayerNorm, GELU MLP, attention and MLP in parallel
// off one norm, biases everywhere, rope over part of each head.
void read_phi(const Reader& r, ModelConfig& m) {
  m.intermediate_size = r.positive_int("intermediate_size");
  m.num_kv_heads = r.positive_int_or("num_key_value_heads", m.num_heads);
  m.norm = NormKind::LayerNorm;
  m.gated_mlp = false;
  m.parallel_residual = true;
  m.qkv_bias = m.o_bias = m.mlp_bias = m.lm_head_bias = true;
  m.hidden_act = r.string_or("hidden_act", "gelu_new");
  if (m.hidden_act.rfind("gelu", 0) != 0) {
    r.fail("hidden_act", "expected a GELU variant for PhiForCausalLM, got \"" + m.hidden_act + "\"");
  }
  m.partial_rotary_factor = r.number_or("partial_rotary_factor", 0.5);
  if (!(m.partial_rotary_factor > 0.0 && m.partial_rotary_factor <= 1.0)) {
    r.fail("partial_rotary_factor", "expected a number in (0, 1]");
  }
  m.rope_theta = r.number_or("rope_theta", 10000.0);
  if (r.flag_or("qk_layernorm", false)) r.fail("qk_layernorm", "true is not supported");
}

// The original Qwen (remote code, QWenLMHeadModel): fused c_attn with bias, and
// intermediate_size is the *sum* of the two gated branches (w1, w2 are intermediate_size / 2).
void read_qwen(const Reader& r, ModelConfig& m) {
  const int both = r.positive_int("intermediate_size");
  if (both % 2 != 0) r.fail("intermediate_size", "expected an even number (two MLP branches)");
  m.intermediate_size = both / 2;
  m.num_kv_heads = m.num_heads;
  m.head_dim = r.positive_int_or("kv_channels", m.head_dim);
  m.qkv_bias = true;
  m.o_bias = m.mlp_bias = !r.flag_or("no_bias", true);
  m.partial_rotary_factor = r.number_or("rotary_pct", 1.0);
  if (!(m.partial_rotary_factor > 0.0 && m.partial_rotary_factor <= 1.0)) {
    r.fail("rotary_pct", "expected a number in (0, 1]");
  }
  m.rope_theta = r.number_or("rotary_emb_base", 10000.0);
  m.max_position_embeddings = r.positive_int_or("seq_length", m.max_position_embeddings);
}

std::string model_name_for(const std::filesystem::path& path) {
  std::filesystem::path file = path.filename();
  // A config.json in a checkpoint folder is named after the folder (".../Llama-3-8B/config.json").
  if (file == "config.json" && path.has_parent_path() && path.parent_path().has_filename()) {
    return path.parent_path().filename().string();
  }
  return file.replace_extension().string();
}

}  // namespace

std::vector<std::string> supported_hf_architectures() {
  std::vector<std::string> out;
  for (const Arch& a : kArchs) out.emplace_back(a.name);
  return out;
}

ModelConfig parse_hf_config(std::string_view json_text, const std::string& origin,
                            std::string name) {
  json j;
  try {
    j = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e400
    throw SpecError(origin, "", std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw SpecError(origin, "", "expected a JSON object (a config.json)");
  const Reader r(j, origin);
  const Arch& arch = find_arch(r);

  ModelConfig m;
  m.name = std::move(name);
  m.architecture = arch.name;
  m.num_layers = r.positive_int("num_hidden_layers");
  m.hidden_size = r.positive_int("hidden_size");
  m.num_heads = r.positive_int("num_attention_heads");
  m.vocab_size = r.positive_int("vocab_size");
  m.max_position_embeddings = r.positive_int_or("max_position_embeddings", 2048);
  m.tied_embeddings = r.flag_or("tie_word_embeddings", false);
  if (r.has("head_dim")) {
    m.head_dim = r.positive_int("head_dim");
  } else if (m.hidden_size % m.num_heads == 0) {
    m.head_dim = m.hidden_size / m.num_heads;
  } else if (arch.family != Family::QWen && arch.family != Family::DeepSeek) {
    r.fail("num_attention_heads", "does not divide hidden_size (" + std::to_string(m.hidden_size) +
                                      ") and no head_dim is given");
  }

  switch (arch.family) {
    case Family::Phi:
      read_phi(r, m);
      break;
    case Family::QWen:
      read_qwen(r, m);
      break;
    default:
      read_llama_like(r, arch.family, m);
      break;
  }
  // DeepSeek-V3's fp8 checkpoint: quantization_config {quant_method: "fp8", weight_block_size:
  // [128, 128]}. Other quantisation methods are not read (the scenario's model.dtype decides).
  if (r.has("quantization_config")) {
    const json& q = r.at("quantization_config");
    if (q.is_object() && q.contains("quant_method") && q.at("quant_method") == "fp8" && q.contains("weight_block_size") &&
        !q.at("weight_block_size").is_null()) {
      const json& b = q.at("weight_block_size");
      const bool ok = b.is_array() && b.size() == 2 && b[0].is_number_integer() && b[1].is_number_integer() &&
                      b[0] == b[1] && b[0].get<long long>() >= 1 && b[0].get<long long>() <= 65536;
      if (!ok)
        r.fail("quantization_config",
               "weight_block_size: expected two equal positive integers such as [128, 128], got " + b.dump());
      m.weight_block_size = b[0].get<int>();
    }
  }
  if (m.num_heads % m.num_kv_heads != 0) {
    r.fail(arch.family == Family::QWen ? "num_attention_heads" : "num_key_value_heads",
           "num_attention_heads (" + std::to_string(m.num_heads) +
               ") must be a multiple of num_key_value_heads (" + std::to_string(m.num_kv_heads) + ")");
  }
  try {
    m.validate();
  } catch (const std::invalid_argument& e) {
    throw SpecError(origin, "", e.what());
  }
  return m;
}

ModelConfig load_hf_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SpecError(path, "", "cannot read file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_hf_config(text.str(), path, model_name_for(path));
}

}  // namespace ks::kernels
