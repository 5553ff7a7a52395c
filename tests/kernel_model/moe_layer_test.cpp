// Measured MoE layers (kernels/moe_layer.hpp): the kernels a layer is priced with, and the table
// format with its errors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/util/csv.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/model_config.hpp"
#include "kernels/moe_layer.hpp"
#include "kernels/step_decomposer.hpp"

using namespace ks::kernels;

namespace {

const char* kHeader = "gpu,source,dtype,tokens,hidden,inter,top_k,experts,tp,ep,time_us,framework,version,kernel_source\n";

std::vector<std::string> names(const std::vector<Kernel>& ks) {
  std::vector<std::string> out;
  for (const Kernel& k : ks) out.emplace_back(k.name);
  return out;
}

const Kernel& named(const std::vector<Kernel>& ks, const char* name) {
  for (const Kernel& k : ks)
    if (std::strcmp(k.name, name) == 0) return k;
  throw std::runtime_error(std::string("no kernel ") + name);
}

std::string error_of(const std::string& csv) {
  try {
    parse_moe_layers("gpu,source,dtype,tokens,hidden,inter,top_k,experts,tp,ep,time_us\n" + csv, "moe.csv");
  } catch (const CsvError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MoeLayer, ALayerIsTheRoutedExpertsKernelsInOrder) {
  // Mixtral-8x7B's experts: 64 tokens, top-2 of 8, one GPU.
  const auto ks = moe_layer_kernels({DType::BF16, 64, 4096, 14336, 2, 8, 1, 1});
  EXPECT_EQ(names(ks), (std::vector<std::string>{"moe_topk", "experts_gate_up", "silu_mul", "experts_down", "moe_sum"}));
  const Kernel& up = named(ks, "experts_gate_up");
  EXPECT_EQ(up.op, OpKind::MoeGemm);
  EXPECT_EQ(up.m, 128);  // 64 tokens x 2 experts each
  EXPECT_EQ(up.n, 2 * 14336);
  EXPECT_EQ(up.k, 4096);
  EXPECT_DOUBLE_EQ(up.flops, 2.0 * 128 * 28672 * 4096);
  const Kernel& down = named(ks, "experts_down");
  EXPECT_EQ(down.n, 4096);
  EXPECT_EQ(down.k, 14336);
  // 128 rows over 8 experts touch all of them: every expert's gate/up weights are read.
  EXPECT_GE(up.bytes, 8.0 * 28672 * 4096 * 2);
}

TEST(MoeLayer, TensorParallelismSplitsEachExpertAndExpertParallelismItsRows) {
  const auto tp = moe_layer_kernels({DType::BF16, 64, 4096, 14336, 2, 8, 4, 1});
  EXPECT_EQ(named(tp, "experts_gate_up").n, 2 * 14336 / 4);
  EXPECT_EQ(named(tp, "experts_gate_up").m, 128);
  EXPECT_EQ(named(tp, "experts_down").k, 14336 / 4);
  // ep = 4: each rank holds 2 of the 8 experts and receives a quarter of the routed rows.
  const auto ep = moe_layer_kernels({DType::BF16, 64, 4096, 14336, 2, 8, 1, 4});
  EXPECT_EQ(named(ep, "experts_gate_up").m, 32);
  EXPECT_EQ(named(ep, "experts_gate_up").n, 2 * 14336);
  EXPECT_LT(named(ep, "experts_gate_up").bytes, named(tp, "experts_gate_up").bytes * 4 / 2);
  // One GPU: no exchange is part of the layer.
  for (const Kernel& k : ep) EXPECT_NE(k.op, OpKind::AllToAll) << k.name;
}

TEST(MoeLayer, Fp8ExpertsRunFp8GroupedGemms) {
  const auto ks = moe_layer_kernels({DType::FP8, 256, 7168, 2048, 8, 256, 1, 8});
  EXPECT_EQ(named(ks, "experts_gate_up").dtype, DType::FP8);
  EXPECT_EQ(named(ks, "experts_down").dtype, DType::FP8);
}

// What `validate --moe` prices a layer with is what a simulated step of a real MoE model runs.
TEST(MoeLayer, TheLayerIsTheOneAMixtralStepRuns) {
  const ModelConfig* mixtral = find_builtin_model("mixtral-8x7b");
  ASSERT_NE(mixtral, nullptr);
  ParallelConfig p;
  p.tp = 2;
  StepBatch batch;
  batch.prefills.push_back(PrefillChunk{512, 0, true});
  const StepKernels step = decompose_step(*mixtral, batch, DType::BF16, DType::BF16, p);
  const auto layer = moe_layer_kernels({DType::BF16, 512, mixtral->hidden_size, mixtral->expert_intermediate_size(),
                                        mixtral->experts_per_token, mixtral->num_experts, 2, 1});
  for (const Kernel& want : layer) {
    const Kernel* got = nullptr;
    for (const Kernel& k : step.per_layer)
      if (std::strcmp(k.name, want.name) == 0) got = &k;
    ASSERT_NE(got, nullptr) << want.name;
    EXPECT_EQ(got->m, want.m) << want.name;
    EXPECT_EQ(got->n, want.n) << want.name;
    EXPECT_EQ(got->k, want.k) << want.name;
    EXPECT_DOUBLE_EQ(got->flops, want.flops) << want.name;
    EXPECT_DOUBLE_EQ(got->bytes, want.bytes) << want.name;
  }
}

TEST(MoeLayer, RowsParseWithTheirEngineColumns) {
  const auto rows = parse_moe_layers(std::string(kHeader) +
                                         "h100_sxm,aic-trtllm-bf16,bf16,64,4096,14336,2,8,2,1,120.5,trtllm,1.3,cutlass\n"
                                         "h100_sxm,aic-trtllm-fp8,fp8,64,4096,14336,2,8,1,4,80,trtllm,1.3,cutlass\n",
                                     "moe.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].framework, "trtllm");
  EXPECT_EQ(rows[0].kernel_source, "cutlass");
  EXPECT_DOUBLE_EQ(rows[0].seconds, 120.5e-6);
  EXPECT_EQ(rows[0].shape.tp, 2);
  EXPECT_EQ(rows[0].kernels.size(), 5u);
  EXPECT_EQ(moe_layer_class(rows[0].shape), "moe bf16");
  EXPECT_EQ(moe_layer_class(rows[1].shape), "moe-ep fp8");
}

TEST(MoeLayer, BadRowsNameTheirLineAndColumn) {
  EXPECT_NE(error_of("h100_sxm,s,bf16,64,4096,14336,9,8,1,1,10\n").find("moe.csv:2: column 'top_k'"), std::string::npos)
      << error_of("h100_sxm,s,bf16,64,4096,14336,9,8,1,1,10\n");
  EXPECT_NE(error_of("h100_sxm,s,bf16,64,4096,14336,2,8,3,1,10\n").find("column 'tp'"), std::string::npos);
  EXPECT_NE(error_of("h100_sxm,s,bf16,64,4096,14336,2,8,1,16,10\n").find("column 'ep'"), std::string::npos);
  EXPECT_NE(error_of("h100_sxm,s,int4,64,4096,14336,2,8,1,1,10\n").find("column 'dtype'"), std::string::npos);
  EXPECT_NE(error_of("h100_sxm,s,bf16,0,4096,14336,2,8,1,1,10\n").find("column 'tokens'"), std::string::npos);
  EXPECT_NE(error_of("h100_sxm,s,bf16,64,4096,14336,2,8,1,1,0\n").find("column 'time_us'"), std::string::npos);
  EXPECT_NE(error_of(",s,bf16,64,4096,14336,2,8,1,1,10\n").find("column 'gpu'"), std::string::npos);
  // The A100 has no fp8 tensor cores: said with the line, not when the layer is priced.
  EXPECT_NE(error_of("a100_sxm_80gb,s,fp8,64,4096,14336,2,8,1,1,10\n").find("moe.csv:2: column 'dtype': GPU "
                                                                           "'a100_sxm_80gb' has no fp8 peak"),
            std::string::npos)
      << error_of("a100_sxm_80gb,s,fp8,64,4096,14336,2,8,1,1,10\n");
}

TEST(MoeLayer, EveryShippedTableLoadsWithCatalogueGpus) {
  const std::filesystem::path dir = "data/moe/aiconfigurator";
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".csv") continue;
    ++files;
    const auto rows = read_moe_layers(entry.path().string());
    ASSERT_GT(rows.size(), 100u) << entry.path();
    for (const auto& r : rows) {
      ASSERT_NE(find_builtin_gpu(r.gpu), nullptr) << entry.path() << ": " << r.gpu;
      ASSERT_FALSE(r.framework.empty()) << entry.path();
    }
  }
  EXPECT_EQ(files, 12u);
}
