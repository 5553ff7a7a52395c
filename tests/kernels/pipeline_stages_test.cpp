// Pipeline parallelism in the cost library: vLLM's layer split, the per-stage kernels and the
// activations handed from stage to stage. Expected values are written out from vLLM's rules
// (vllm/distributed/utils.py get_pp_indices, parallel_state.py send_tensor_dict), not from the code.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kernels/model_config.hpp"
#include "kernels/step_decomposer.hpp"

using namespace ks::kernels;

namespace {

std::vector<int> sizes(int layers, int pp) {
  std::vector<int> out;
  for (int s = 0; s < pp; ++s) out.push_back(pp_stage_layers(layers, s, pp).count());
  return out;
}

// Launches per kernel name over a whole step (pre + layers x per_layer + post).
std::map<std::string, long> launches(const StepKernels& k) {
  std::map<std::string, long> n;
  for (const auto& x : k.pre) ++n[x.name];
  for (const auto& x : k.per_layer) n[x.name] += k.num_layers;
  for (const auto& x : k.post) ++n[x.name];
  return n;
}

StepBatch mixed_batch() {
  StepBatch b;
  b.prefills = {{300, 0, true}, {200, 100, false}};
  b.decode_contexts = {50, 700, 1200};
  return b;
}

}  // namespace

TEST(PipelineStages, LayersSplitAsVllmGetPpIndices) {
  // num_layers / pp each; the remainder one extra each on stages pp-2, pp-3, ...
  EXPECT_EQ(sizes(32, 4), (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(sizes(10, 4), (std::vector<int>{2, 3, 3, 2}));
  EXPECT_EQ(sizes(11, 4), (std::vector<int>{3, 3, 3, 2}));
  EXPECT_EQ(sizes(80, 3), (std::vector<int>{27, 27, 26}));
  EXPECT_EQ(sizes(5, 2), (std::vector<int>{3, 2}));
  EXPECT_EQ(sizes(7, 7), (std::vector<int>{1, 1, 1, 1, 1, 1, 1}));
  // Contiguous, covering every layer once; the busiest stage has layers_per_stage layers.
  for (int pp = 1; pp <= 13; ++pp) {
    int next = 0, most = 0;
    for (int s = 0; s < pp; ++s) {
      const LayerRange r = pp_stage_layers(13, s, pp);
      EXPECT_EQ(r.begin, next);
      next = r.end;
      most = std::max(most, r.count());
    }
    EXPECT_EQ(next, 13);
    EXPECT_EQ(most, layers_per_stage(13, pp));
  }
  EXPECT_THROW(pp_stage_layers(4, 0, 5), std::invalid_argument);
  EXPECT_THROW(pp_stage_layers(4, 2, 2), std::invalid_argument);
}

TEST(PipelineStages, StagesTogetherRunThePp1StepsKernels) {
  const auto* model = find_builtin_model("llama-3-8b");
  ASSERT_NE(model, nullptr);
  const StepBatch batch = mixed_batch();
  const StepKernels whole = decompose_step(*model, batch, DType::BF16, DType::BF16, {1, 1});
  std::vector<StepKernels> stages;
  decompose_stages(*model, batch, DType::BF16, DType::BF16, {1, 3}, stages);
  ASSERT_EQ(stages.size(), 3u);
  // 32 layers over 3 stages: 11, 11, 10.
  EXPECT_EQ(stages[0].num_layers, 11);
  EXPECT_EQ(stages[1].num_layers, 11);
  EXPECT_EQ(stages[2].num_layers, 10);
  std::map<std::string, long> sum;
  for (const auto& s : stages)
    for (const auto& [name, n] : launches(s)) sum[name] += n;
  EXPECT_EQ(sum, launches(whole));
  // The embedding on the first stage only; final norm, LM head and sampler on the last only.
  EXPECT_EQ(launches(stages[0]).count("embedding"), 1u);
  EXPECT_TRUE(stages[1].pre.empty() && stages[1].post.empty());
  EXPECT_EQ(launches(stages[2]).count("lm_head"), 1u);
  EXPECT_EQ(launches(stages[2]).count("sampler"), 1u);
  EXPECT_TRUE(stages[0].post.empty());
  // Every stage's layer is the pp=1 step's layer: same kernels, same shapes.
  for (const auto& s : stages) {
    ASSERT_EQ(s.per_layer.size(), whole.per_layer.size());
    for (std::size_t i = 0; i < s.per_layer.size(); ++i) {
      EXPECT_STREQ(s.per_layer[i].name, whole.per_layer[i].name);
      EXPECT_EQ(s.per_layer[i].flops, whole.per_layer[i].flops);
      EXPECT_EQ(s.per_layer[i].bytes, whole.per_layer[i].bytes);
    }
  }
  // pp = 1 is the plain decomposition.
  decompose_stages(*model, batch, DType::BF16, DType::BF16, {1, 1}, stages);
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(launches(stages[0]), launches(whole));
}

TEST(PipelineStages, UnderTpEachRankSendsASliceAndTheNextStageGathersIt) {
  const auto* model = find_builtin_model("llama-3-8b");
  ASSERT_NE(model, nullptr);
  const StepBatch batch = mixed_batch();
  const std::int64_t tokens = 300 + 200 + 3;
  // Llama hands over hidden states and residual: 2 x tokens x 4096 x 2 bytes, 1/tp per rank.
  const double full = 2.0 * tokens * 4096 * 2;
  EXPECT_DOUBLE_EQ(pp_send_bytes(*model, tokens, DType::BF16, 1), full);
  EXPECT_DOUBLE_EQ(pp_send_bytes(*model, tokens, DType::BF16, 4), full / 4);
  EXPECT_DOUBLE_EQ(pp_send_bytes(*model, tokens, DType::FP8, 4), full / 4);  // activations stay 16-bit
  std::vector<StepKernels> stages;
  decompose_stages(*model, batch, DType::BF16, DType::BF16, {4, 2}, stages);
  ASSERT_EQ(stages[1].pre.size(), 1u);
  const Kernel& gather = stages[1].pre.front();
  EXPECT_EQ(gather.op, OpKind::AllGather);
  EXPECT_EQ(gather.bytes, full);  // nccl size: the gathered tensor
  EXPECT_EQ(gather.m, tokens);
  // The first stage keeps the embedding and its all-reduce; no gather there.
  EXPECT_EQ(stages[0].pre.front().op, OpKind::Embedding);
  for (const auto& k : stages[0].pre) EXPECT_NE(k.op, OpKind::AllGather);
  // A parallel block (Phi) has no separate residual stream: one tensor.
  const auto* phi = find_builtin_model("phi-2");
  ASSERT_NE(phi, nullptr);
  EXPECT_DOUBLE_EQ(pp_send_bytes(*phi, 10, DType::BF16, 1), 10.0 * phi->hidden_size * 2);
}

TEST(PipelineStages, StageParametersAddUpToTheModelPlusTheLastStagesCopyOfTiedEmbeddings) {
  std::vector<ModelConfig> models;
  for (const char* name : {"llama-3-8b", "llama-2-70b", "mixtral-8x7b", "phi-2"}) {
    ASSERT_NE(find_builtin_model(name), nullptr) << name;
    models.push_back(*find_builtin_model(name));
  }
  models.push_back(models.front());
  models.back().tied_embeddings = !models.back().tied_embeddings;  // both ways
  for (const ModelConfig& m : models) {
    const ModelConfig* model = &m;
    const std::string name = m.name + (m.tied_embeddings ? " (tied)" : "");
    for (int pp : {1, 2, 3, 4}) {
      std::int64_t sum = 0;
      for (int s = 0; s < pp; ++s)
        sum += model->stage_parameter_count(pp_stage_layers(model->num_layers, s, pp).count(), s == 0, s == pp - 1);
      const std::int64_t copy = model->tied_embeddings && pp > 1 ? std::int64_t{model->vocab_size} * model->hidden_size : 0;
      EXPECT_EQ(sum, model->parameter_count() + copy) << name << " pp=" << pp;
    }
  }
}
