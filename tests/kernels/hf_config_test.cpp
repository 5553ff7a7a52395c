#include "kernels/hf_config.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/spec_error.hpp"

namespace ks::kernels {
namespace {

const ModelConfig& model(const std::string& name) {
  const ModelConfig* m = find_builtin_model(name);
  if (m == nullptr) throw std::runtime_error("missing preset " + name);
  return *m;
}

// The configs shipped in data/models, with the size their model cards / safetensors index
// publish (not derived from our formula).
TEST(HfConfig, EveryShippedConfigMatchesItsPublishedSize) {
  struct Case {
    const char* name;
    double published;
  };
  const Case cases[] = {
      {"llama-2-7b", 6.74e9},     {"llama-2-13b", 13.0e9},   {"llama-2-70b", 69.0e9},
      {"llama-3-8b", 8.03e9},     {"llama-3-70b", 70.6e9},   {"llama-3.1-8b", 8.03e9},
      {"llama-3.1-70b", 70.6e9},  {"codellama-34b", 33.7e9}, {"mistral-7b", 7.24e9},
      {"mixtral-8x7b", 46.7e9},   {"qwen-72b", 72.3e9},      {"internlm-20b", 20.0e9},
      {"phi-2", 2.78e9},          {"llama-3.2-1b", 1.24e9},
      // DeepSeek-V3 model card: 671B (without the 14B multi-token-prediction module); Qwen3 cards.
      {"deepseek-v3", 671e9},     {"qwen3-30b-a3b", 30.5e9}, {"qwen3-235b-a22b", 235e9},
  };
  ASSERT_EQ(builtin_model_names().size(), std::size(cases));
  for (const Case& c : cases) {
    const double count = static_cast<double>(model(c.name).parameter_count());
    EXPECT_LT(std::abs(count - c.published) / c.published, 0.01) << c.name << ": " << count;
  }
  // Exact safetensors totals where we know them.
  EXPECT_EQ(model("mixtral-8x7b").parameter_count(), 46702792704);
  EXPECT_EQ(model("llama-3.1-70b").parameter_count(), 70553706496);
  // Tied embeddings: 128256 x 2048 embedding + 16 x 60821504 per layer + 2048 final norm.
  EXPECT_EQ(model("llama-3.2-1b").parameter_count(), 1235814400);
}

TEST(HfConfig, FamiliesMapToTheirShapes) {
  const ModelConfig& mixtral = model("mixtral-8x7b");
  EXPECT_EQ(mixtral.architecture, "MixtralForCausalLM");
  EXPECT_EQ(mixtral.num_experts, 8);
  EXPECT_EQ(mixtral.experts_per_token, 2);
  EXPECT_EQ(mixtral.num_kv_heads, 8);

  const ModelConfig& phi = model("phi-2");
  EXPECT_EQ(phi.norm, NormKind::LayerNorm);
  EXPECT_FALSE(phi.gated_mlp);
  EXPECT_TRUE(phi.parallel_residual);
  EXPECT_TRUE(phi.qkv_bias && phi.o_bias && phi.mlp_bias && phi.lm_head_bias);
  EXPECT_EQ(phi.head_dim, 80);
  EXPECT_EQ(phi.rotary_dim(), 32);  // partial_rotary_factor 0.4 of 80
  EXPECT_EQ(phi.hidden_act, "gelu_new");

  const ModelConfig& qwen = model("qwen-72b");
  EXPECT_EQ(qwen.intermediate_size, 24576);  // config says 49152 = both gated branches
  EXPECT_EQ(qwen.num_kv_heads, 64);
  EXPECT_TRUE(qwen.qkv_bias);
  EXPECT_FALSE(qwen.o_bias);
  EXPECT_EQ(qwen.max_position_embeddings, 32768);

  EXPECT_EQ(model("mistral-7b").sliding_window, 4096);
  EXPECT_EQ(model("mixtral-8x7b").sliding_window, 0);  // "sliding_window": null
  EXPECT_EQ(model("codellama-34b").rope_theta, 1e6);
  EXPECT_EQ(model("internlm-20b").num_layers, 60);
  EXPECT_FALSE(model("internlm-20b").qkv_bias);  // "bias": false
}

// Configs users bring: Qwen2 and InternLM2 are supported without being shipped.
TEST(HfConfig, Qwen2AndInternLM2MatchPublishedCounts) {
  const ModelConfig qwen2 = parse_hf_config(R"({
    "architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "intermediate_size": 18944,
    "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
    "vocab_size": 152064, "max_position_embeddings": 131072, "hidden_act": "silu",
    "tie_word_embeddings": false, "use_sliding_window": false, "sliding_window": 131072})",
                                            "qwen2-7b.json", "qwen2-7b");
  EXPECT_TRUE(qwen2.qkv_bias);
  EXPECT_EQ(qwen2.sliding_window, 0);
  EXPECT_EQ(qwen2.parameter_count(), 7615616512);  // Qwen/Qwen2-7B safetensors total

  const ModelConfig internlm2 = parse_hf_config(R"({
    "architectures": ["InternLM2ForCausalLM"], "bias": false, "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "vocab_size": 92544, "max_position_embeddings": 32768})",
                                                "internlm2-7b.json", "internlm2-7b");
  EXPECT_LT(std::abs(internlm2.parameter_count() - 7.74e9) / 7.74e9, 0.01);
}

std::string error_of(const std::string& json) {
  try {
    parse_hf_config(json, "models/x.json", "x");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

TEST(HfConfig, MalformedConfigsNameFileAndKey) {
  const std::string ok_tail = R"("hidden_size": 4096, "intermediate_size": 11008,
      "num_hidden_layers": 32, "vocab_size": 32000)";
  EXPECT_EQ(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_attention_heads": "32", )" +
                     ok_tail + "}"),
            "models/x.json: key 'num_attention_heads': expected a positive integer, got \"32\"");
  EXPECT_EQ(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_attention_heads": -4, )" +
                     ok_tail + "}"),
            "models/x.json: key 'num_attention_heads': expected a positive integer, got -4");
  EXPECT_EQ(error_of(R"({"architectures": ["LlamaForCausalLM"], )" + ok_tail + "}"),
            "models/x.json: key 'num_attention_heads': missing (expected a positive integer)");
  EXPECT_NE(error_of(R"({"architectures": ["GPT2LMHeadModel"]})")
                .find("key 'architectures': unsupported architecture 'GPT2LMHeadModel'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_attention_heads": 32,
                        "num_key_value_heads": 6, )" + ok_tail + "}")
                .find("key 'num_key_value_heads'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"architectures": ["MixtralForCausalLM"], "num_attention_heads": 32,
                        "num_local_experts": 8, "num_experts_per_tok": 9, )" + ok_tail + "}")
                .find("key 'num_experts_per_tok'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"architectures": ["MixtralForCausalLM"], "num_attention_heads": 32, )" +
                     ok_tail + "}")
                .find("key 'num_local_experts': missing"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"architectures": ["LlamaForCausalLM"], "num_attention_heads": 32,
                        "hidden_act": "gelu", )" + ok_tail + "}")
                .find("key 'hidden_act'"),
            std::string::npos);
  EXPECT_NE(error_of("{not json").find("models/x.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("expected a JSON object"), std::string::npos);
}

TEST(HfConfig, LoadsFilesAndNamesModelsAfterThem) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "ks_hf_config_test" / "My-Model-7B";
  fs::create_directories(dir);
  std::ifstream src("data/models/llama-2-7b.json");
  ASSERT_TRUE(src) << "run from the source tree (ctest sets the working directory)";
  {
    std::ofstream(dir / "config.json") << src.rdbuf();
  }
  fs::copy_file(dir / "config.json", dir.parent_path() / "tiny.json",
                fs::copy_options::overwrite_existing);
  const ModelConfig folder = load_hf_config((dir / "config.json").string());
  EXPECT_EQ(folder.name, "My-Model-7B");
  EXPECT_EQ(folder.parameter_count(), 6738415616);
  EXPECT_EQ(load_hf_config((dir.parent_path() / "tiny.json").string()).name, "tiny");
  try {
    load_hf_config((dir / "missing.json").string());
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: cannot read file"), std::string::npos);
  }
  fs::remove_all(dir.parent_path());
}

}  // namespace
}  // namespace ks::kernels
