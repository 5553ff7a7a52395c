#include "serving/engine_profile.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/config/error.hpp"

using namespace ks;

TEST(EngineProfile, FillsOnlyWhatTheScenarioLeavesOpen) {
  config::Document doc = config::Document::parse(
      "profile: trtllm\nengine: {max_num_seqs: 32}\nhardware: {host: {launch_overhead: 3us}}\n", "p.yaml");
  serving::apply_engine_profile(doc);
  const std::string y = doc.resolved_yaml();
  EXPECT_NE(y.find("max_num_seqs: 32"), std::string::npos) << y;       // the scenario's value wins
  EXPECT_NE(y.find("launch_overhead: 3us"), std::string::npos) << y;
  EXPECT_NE(y.find("prepare_overhead: 100us"), std::string::npos) << y;  // the profile's default
  EXPECT_NE(y.find("kind: orca"), std::string::npos) << y;  // in-flight batching, KV reserved whole
  EXPECT_NE(y.find("kv_cache_free_memory_fraction: 0.9\n"), std::string::npos) << y;  // TensorRT-LLM's sizing
  // A scenario that sizes its cache the vLLM way keeps it.
  config::Document sized = config::Document::parse("profile: trtllm\ncache: {gpu_memory_utilization: 0.8}\n", "p.yaml");
  serving::apply_engine_profile(sized);
  EXPECT_EQ(sized.resolved_yaml().find("kv_cache_free_memory_fraction"), std::string::npos) << sized.resolved_yaml();
}

TEST(EngineProfile, OtherKindsAreLeftAloneAndUnknownNamesRejected) {
  config::Document doc = config::Document::parse("profile: sglang\nengine: {kind: sarathi}\n", "p.yaml");
  serving::apply_engine_profile(doc);
  EXPECT_EQ(doc.resolved_yaml().find("max_num_batched_tokens"), std::string::npos);
  config::Document bad = config::Document::parse("profile: tgi\n", "p.yaml");
  EXPECT_THROW(serving::apply_engine_profile(bad), config::ConfigError);
}

TEST(EngineProfile, VllmUsesTheFittedHostUnlessTheScenarioTunesAnother) {
  config::Document silent = config::Document::parse("profile: vllm\n", "p.yaml");
  serving::apply_engine_profile(silent);
  const std::string y = silent.resolved_yaml();
  EXPECT_NE(y.find("kind: fitted"), std::string::npos) << y;
  EXPECT_NE(y.find("cuda_graphs: true"), std::string::npos) << y;
  EXPECT_EQ(y.find("prepare_overhead"), std::string::npos) << y;
  // Host keys without a kind tune fixed_overhead: the profile's fitted-host keys stay out.
  config::Document tuned =
      config::Document::parse("profile: vllm\nhardware: {host: {prepare_overhead: 300us}}\n", "p.yaml");
  serving::apply_engine_profile(tuned);
  const std::string t = tuned.resolved_yaml();
  EXPECT_EQ(t.find("fitted"), std::string::npos) << t;
  EXPECT_EQ(t.find("cuda_graphs"), std::string::npos) << t;
  config::Document named = config::Document::parse(
      "profile: vllm\nhardware: {host: {kind: fitted, measurements: a40}}\n", "p.yaml");
  serving::apply_engine_profile(named);
  const std::string n = named.resolved_yaml();
  EXPECT_NE(n.find("measurements: a40"), std::string::npos) << n;  // the scenario's value wins
  EXPECT_NE(n.find("cuda_graphs: true"), std::string::npos) << n;
}

// vLLM v0.6: the v0 scheduler (prompts first, no chunking), prefix caching off (its default
// before v1), vLLM's fitted host with v0's CUDA graph sizes (up to batch 256); the scenario's own
// engine and cache values stay its own.
TEST(EngineProfile, VllmV0PicksTheV0SchedulerWithoutPrefixCachingAndKeepsTheScenariosValues) {
  config::Document doc = config::Document::parse(
      "profile: vllm_v0\nengine: {max_num_seqs: 64}\ncache: {gpu_memory_utilization: 0.8}\n", "p.yaml");
  serving::apply_engine_profile(doc);
  const std::string y = doc.resolved_yaml();
  EXPECT_NE(y.find("kind: vllm_v0"), std::string::npos) << y;
  EXPECT_NE(y.find("max_num_seqs: 64"), std::string::npos) << y;
  EXPECT_EQ(y.find("max_num_seqs: 256"), std::string::npos) << y;
  EXPECT_NE(y.find("max_num_batched_tokens: 8192"), std::string::npos) << y;
  // A cache section that sizes the cache still gets the profile's other cache defaults.
  EXPECT_NE(y.find("gpu_memory_utilization: 0.8"), std::string::npos) << y;
  EXPECT_NE(y.find("enable_prefix_caching: false"), std::string::npos) << y;
  EXPECT_NE(y.find("kind: fitted"), std::string::npos) << y;
  EXPECT_NE(y.find("cuda_graph_max_batch_size: 256"), std::string::npos) << y;
}

// The profile names the engine whose measured kernels price a catalog GPU; a scenario's own
// choice and a plug-in GPU (which has no such key) are left alone.
TEST(EngineProfile, PicksTheEnginesKernelCalibrationForCatalogGpus) {
  for (const auto& [profile, engine] : std::vector<std::pair<std::string, std::string>>{
           {"vllm", "vllm"}, {"vllm_v0", "vllm"}, {"sglang", "sglang"}, {"trtllm", "trtllm"}}) {
    config::Document doc = config::Document::parse("profile: " + profile + "\n", "p.yaml");
    serving::apply_engine_profile(doc);
    EXPECT_NE(doc.resolved_yaml().find("kernel_engine: " + engine), std::string::npos) << profile;
  }
  config::Document own = config::Document::parse("profile: trtllm\nhardware: {gpu: {kernel_engine: vllm}}\n", "p.yaml");
  serving::apply_engine_profile(own);
  EXPECT_NE(own.resolved_yaml().find("kernel_engine: vllm"), std::string::npos) << own.resolved_yaml();
  config::Document plugin = config::Document::parse("profile: trtllm\nhardware: {gpu: {kind: hbm_gpu}}\n", "p.yaml");
  serving::apply_engine_profile(plugin);
  EXPECT_EQ(plugin.resolved_yaml().find("kernel_engine"), std::string::npos) << plugin.resolved_yaml();
}

TEST(EngineProfile, VllmAndSglangRunTheirCustomAllReduceBelow8MiBTrtllmKeepsNccl) {
  for (const char* name : {"vllm", "vllm_v0", "sglang"}) {
    config::Document doc = config::Document::parse(std::string("profile: ") + name + "\n", "p.yaml");
    serving::apply_engine_profile(doc);
    EXPECT_NE(doc.resolved_yaml().find("custom_allreduce_max_bytes: 8MiB"), std::string::npos)
        << name << "\n" << doc.resolved_yaml();
  }
  // The scenario's own value (here: custom all-reduce off) wins.
  config::Document off = config::Document::parse(
      "profile: vllm\nhardware: {topology: {kind: dgx_h100, custom_allreduce_max_bytes: 0B}}\n", "p.yaml");
  serving::apply_engine_profile(off);
  EXPECT_NE(off.resolved_yaml().find("custom_allreduce_max_bytes: 0B"), std::string::npos) << off.resolved_yaml();
  EXPECT_EQ(off.resolved_yaml().find("8MiB"), std::string::npos) << off.resolved_yaml();
  config::Document trt = config::Document::parse("profile: trtllm\n", "p.yaml");
  serving::apply_engine_profile(trt);
  EXPECT_EQ(trt.resolved_yaml().find("custom_allreduce"), std::string::npos) << trt.resolved_yaml();
}
