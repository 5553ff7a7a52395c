#include "kernels/model_config.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace ks::kernels {
namespace {

const ModelConfig& model(const char* name) {
  const ModelConfig* m = find_builtin_model(name);
  if (m == nullptr) throw std::runtime_error(std::string("missing preset ") + name);
  return *m;
}

// Published sizes: the rounded figure of the model card and the exact safetensors total.
TEST(ModelConfig, ParameterCountsMatchPublishedSizes) {
  struct Case {
    const char* name;
    double rounded;
    std::int64_t exact;
  };
  const Case cases[] = {
      {"llama-2-7b", 6.74e9, 6738415616},   {"llama-2-13b", 13.0e9, 13015864320},
      {"llama-2-70b", 69.0e9, 68976648192}, {"llama-3-8b", 8.03e9, 8030261248},
      {"llama-3-70b", 70.6e9, 70553706496}, {"llama-3.1-8b", 8.03e9, 8030261248},
      {"mistral-7b", 7.24e9, 7241732096},
  };
  for (const Case& c : cases) {
    const double count = static_cast<double>(model(c.name).parameter_count());
    EXPECT_LT(std::abs(count - c.rounded) / c.rounded, 0.01) << c.name;
    EXPECT_EQ(model(c.name).parameter_count(), c.exact) << c.name;
  }
}

TEST(ModelConfig, PresetsHaveHfShapes) {
  const ModelConfig& l3 = model("llama-3-8b");
  EXPECT_EQ(l3.num_kv_heads, 8);
  EXPECT_EQ(l3.head_dim, 128);
  EXPECT_EQ(l3.vocab_size, 128256);
  EXPECT_EQ(model("llama-3.1-8b").max_position_embeddings, 131072);
  EXPECT_EQ(model("mistral-7b").max_position_embeddings, 32768);
  for (const std::string& name : builtin_model_names()) {
    EXPECT_NO_THROW(model(name.c_str()).validate()) << name;
  }
  EXPECT_GE(builtin_model_names().size(), 7u);
}

TEST(ModelConfig, LookupIsCaseInsensitiveAndRejectsUnknown) {
  EXPECT_EQ(find_builtin_model("Llama-2-7B"), find_builtin_model("llama-2-7b"));
  EXPECT_EQ(find_builtin_model("gpt-5"), nullptr);
}

TEST(ModelConfig, WeightAndKvBytes) {
  const ModelConfig& l2 = model("llama-2-7b");
  EXPECT_DOUBLE_EQ(l2.weight_bytes(DType::BF16), 2.0 * 6738415616.0);
  EXPECT_DOUBLE_EQ(l2.weight_bytes(DType::INT4), 0.5 * 6738415616.0);
  // Llama-2-7B: 32 layers x (K + V) x 32 heads x 128 x 2 B = 512 KiB per token.
  EXPECT_DOUBLE_EQ(l2.kv_bytes_per_token(DType::BF16), 512.0 * 1024.0);
  // Llama-3-8B has 8 KV heads (GQA): a quarter of that, halved again in fp8.
  EXPECT_DOUBLE_EQ(model("llama-3-8b").kv_bytes_per_token(DType::FP8), 64.0 * 1024.0);
}

TEST(ModelConfig, ValidateRejectsBadShapes) {
  ModelConfig m = model("llama-3-8b");
  m.num_kv_heads = 7;
  try {
    m.validate();
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("num_kv_heads"), std::string::npos) << e.what();
  }
  m = model("llama-3-8b");
  m.hidden_size = 0;
  EXPECT_THROW(m.validate(), std::invalid_argument);
  m = model("llama-3-8b");
  m.num_experts = 8;
  m.experts_per_token = 9;
  EXPECT_THROW(m.validate(), std::invalid_argument);
}

TEST(ModelConfig, MoeParameterCountScalesExperts) {
  ModelConfig dense = model("mistral-7b");
  ModelConfig moe = dense;
  moe.num_experts = 8;
  moe.experts_per_token = 2;
  // Mixtral-8x7B has Mistral-7B's shape with 8 experts: 46.70e9 parameters.
  EXPECT_EQ(moe.parameter_count(), 46702792704);
}

}  // namespace
}  // namespace ks::kernels
