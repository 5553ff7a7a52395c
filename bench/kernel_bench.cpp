// Kernel cost prediction speed: decomposing a step and pricing its kernels in every tier, with and
// without the memo the simulator uses. Counters report kernels per second.
#include <benchmark/benchmark.h>

#include "kernels/calibration_store.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "kernels/model_config.hpp"
#include "kernels/step_decomposer.hpp"

using namespace ks::kernels;

namespace {

// A mixed step: one 512-token prefill chunk and 64 decodes of varied context.
StepKernels mixed_step() {
  StepBatch batch;
  batch.prefills = {{512, 1024, true}};
  for (int i = 0; i < 64; ++i) batch.decode_contexts.push_back(200 + 37 * i);
  return decompose_step(*find_builtin_model("llama-3-8b"), batch, DType::BF16, DType::BF16);
}

std::vector<Kernel> kernels_of(const StepKernels& s) {
  std::vector<Kernel> all = s.pre.to_vector();
  all.insert(all.end(), s.per_layer.begin(), s.per_layer.end());
  all.insert(all.end(), s.post.begin(), s.post.end());
  return all;
}

void price(benchmark::State& state, Tier tier, const char* gpu_name, bool memo) {
  const GpuSpec& gpu = *find_builtin_gpu(gpu_name);
  const std::vector<Kernel> ks = kernels_of(mixed_step());
  std::shared_ptr<const EfficiencyModel> model;
  if (tier != Tier::Roofline) model = tier_model(tier, gpu_name);
  KernelCostModel costs(tier, gpu, model, kRooflineLaunchSeconds);
  for (auto _ : state) {
    for (const Kernel& k : ks) {
      const KernelCost c = memo ? costs.cost(k)
                                : (tier == Tier::Roofline ? roofline_cost(k, gpu, kRooflineLaunchSeconds)
                                                          : model->cost(k, gpu));
      benchmark::DoNotOptimize(c.seconds);
    }
  }
  state.counters["kernels/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * ks.size()), benchmark::Counter::kIsRate);
}

void BM_Roofline(benchmark::State& s) { price(s, Tier::Roofline, "h100_sxm", false); }
void BM_CrossGen(benchmark::State& s) { price(s, Tier::CrossGen, "h100_sxm", false); }
void BM_Target(benchmark::State& s) { price(s, Tier::Target, "a100_sxm_80gb", false); }
void BM_TargetMemoised(benchmark::State& s) { price(s, Tier::Target, "a100_sxm_80gb", true); }

void BM_DecomposeStep(benchmark::State& state) {
  StepBatch batch;
  batch.prefills = {{512, 1024, true}};
  for (int i = 0; i < 64; ++i) batch.decode_contexts.push_back(200 + 37 * i);
  const ModelConfig& model = *find_builtin_model("llama-3-8b");
  StepKernels out;
  std::size_t n = 0;
  for (auto _ : state) {
    decompose_step(model, batch, DType::BF16, DType::BF16, {}, out);
    n += out.pre.size() + out.per_layer.size() + out.post.size();
  }
  state.counters["kernels/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_Roofline);
BENCHMARK(BM_CrossGen);
BENCHMARK(BM_Target);
BENCHMARK(BM_TargetMemoised);
BENCHMARK(BM_DecomposeStep);
BENCHMARK_MAIN();
