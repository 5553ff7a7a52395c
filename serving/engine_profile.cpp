#include "serving/engine_profile.hpp"

#include "base/config/error.hpp"
#include "base/config/schema.hpp"

namespace ks::serving {

namespace {

using Defaults = std::vector<std::pair<std::string, std::string>>;

// vLLM's custom all-reduce (and SGLang's, adapted from it) runs all-reduces below its max_size,
// 8 MiB by default (vllm/distributed/device_communicators/custom_all_reduce.py,
// CustomAllreduce(max_size=8192 * 1024)); NCCL above. TensorRT-LLM's AllReduce picks its own
// strategy by tables not modelled here, so its profile keeps NCCL.
constexpr const char* kCustomAllReduceMax = "8MiB";

// vLLM's host (both vLLM profiles) is the `fitted` kind: CPU phases fitted to measured overheads
// of a vLLM-derived engine (docs/hardware.md), with CUDA graphs for decode as vLLM captures them
// (v1 up to batch 512, v0 up to 256).
Defaults with_vllm_host(Defaults engine, const char* cuda_graph_max_batch_size) {
  engine.insert(engine.end(), {{"hardware.gpu.kernel_engine", "vllm"},
                               {"hardware.host.kind", "fitted"},
                               {"hardware.host.measurements", "a100"},
                               {"hardware.host.launch_overhead", "4us"},
                               {"hardware.host.cuda_graphs", "true"},
                               {"hardware.host.cuda_graph_max_batch_size", cuda_graph_max_batch_size},
                               {"hardware.topology.custom_allreduce_max_bytes", kCustomAllReduceMax}});
  return engine;
}

}  // namespace

// SGLang's and TensorRT-LLM's hosts are rough figures, not fitted to any measurement: SGLang's
// overlap scheduler hides most CPU time per step, TensorRT-LLM has a C++ runtime; CUDA graphs /
// fused kernels make per-kernel launch cost smaller. Override any of them in the scenario.
const std::vector<EngineProfile>& engine_profiles() {
  static const std::vector<EngineProfile> profiles{
      {"vllm", "vLLM v1: chunked prefill, 8192-token budget, Python engine overheads",
       with_vllm_host({{"engine.kind", "vllm_v1"},
                       {"engine.max_num_seqs", "256"},
                       {"engine.max_num_batched_tokens", "8192"}},
                      "512")},
      {"vllm_v0", "vLLM v0 (<= 0.6): prompts first without chunking, Python engine overheads; "
                  "set engine.num_scheduler_steps for --num-scheduler-steps",
       with_vllm_host({{"engine.kind", "vllm_v0"},
                       {"engine.max_num_seqs", "256"},
                       {"engine.max_num_batched_tokens", "8192"},
                       {"cache.enable_prefix_caching", "false"}},  // off by default before vLLM v1
                      "256")},
      {"sglang", "SGLang: chunked prefill (8192), overlap scheduling hides most CPU time per step",
       {{"engine.kind", "vllm_v1"},
        {"engine.max_num_seqs", "256"},
        {"engine.max_num_batched_tokens", "8192"},
        {"hardware.gpu.kernel_engine", "sglang"},
        {"hardware.host.prepare_overhead", "200us"},
        {"hardware.host.finish_overhead", "100us"},
        {"hardware.host.launch_overhead", "2us"},
        {"hardware.topology.custom_allreduce_max_bytes", kCustomAllReduceMax}}},
      {"trtllm", "TensorRT-LLM: in-flight batching without chunked context, C++ runtime",
       // In-flight batching with the GUARANTEED_NO_EVICT capacity scheduler (KV for the whole
       // output reserved at admission) and the trtllm-build default max_batch_size of 2048.
       {{"engine.kind", "orca"},
        {"engine.max_num_seqs", "2048"},
        {"engine.max_num_batched_tokens", "8192"},
        {"cache.kv_cache_free_memory_fraction", "0.9"},  // KvCacheConfig.free_gpu_memory_fraction
        {"hardware.gpu.kernel_engine", "trtllm"},
        {"hardware.host.prepare_overhead", "100us"},
        {"hardware.host.finish_overhead", "50us"},
        {"hardware.host.launch_overhead", "1us"}},
       false},
  };
  return profiles;
}

bool profile_caps_at_model_context(const std::string& profile) {
  for (const auto& p : engine_profiles())
    if (p.name == profile) return p.caps_at_model_context;
  return true;
}

void apply_engine_profile(config::Document& scenario) {
  config::Section root = scenario.root();
  std::vector<std::string> names{"none"};
  for (const auto& p : engine_profiles()) names.push_back(p.name);
  config::Schema schema;
  schema.choice("profile", names, std::string("none"), "engine profile");
  const config::Params top = root.resolve(schema);
  const std::string name = top.string("profile");
  if (name == "none") return;
  const EngineProfile* profile = nullptr;
  for (const auto& p : engine_profiles())
    if (p.name == name) profile = &p;

  auto kind_of = [&](const std::string& section, const std::string& path) {
    config::Section s = root.section(section, false);
    if (path.empty()) return s.has("kind") ? s.kind() : std::string();
    config::Section sub = s.section(path, false);
    return sub.has("kind") ? sub.kind() : std::string();
  };
  const std::string engine_kind = kind_of("engine", "");
  std::string host_kind = kind_of("hardware", "host");
  std::string profile_engine_kind, profile_host_kind = "fixed_overhead";
  for (const auto& [key, value] : profile->defaults) {
    if (key == "engine.kind") profile_engine_kind = value;
    if (key == "hardware.host.kind") profile_host_kind = value;
  }
  // A host section with keys but no kind tunes the default kind (fixed_overhead); only a scenario
  // silent about its host gets the profile's host kind. launch_granularity does not count: it
  // picks how the simulation carries the launches (`--exact` sets it), not the host modelled.
  if (host_kind.empty()) {
    bool host_tuned = false;
    for (const std::string& key : root.section("hardware", false).section("host", false).keys())
      host_tuned |= key != "launch_granularity";
    host_kind = host_tuned ? "fixed_overhead" : profile_host_kind;
  }

  for (const auto& [key, value] : profile->defaults) {
    const std::size_t dot = key.rfind('.');
    const std::string section = key.substr(0, dot), leaf = key.substr(dot + 1);
    if (section == "engine" && !engine_kind.empty() && engine_kind != profile_engine_kind) continue;
    if (section == "hardware.host" && host_kind != profile_host_kind) continue;
    // The GPU's kernel engine applies to catalog GPUs (a plug-in GPU has no such key).
    const std::string gpu_kind = kind_of("hardware", "gpu");
    if (section == "hardware.gpu" && !gpu_kind.empty() && gpu_kind != "catalog") continue;
    bool present = false;
    if (section == "engine") {
      present = root.section("engine", false).has(leaf);
    } else if (section == "cache") {
      // Either way of sizing the KV cache the scenario chose wins over the profile's.
      const config::Section cache = root.section("cache", false);
      const bool sizing = leaf == "gpu_memory_utilization" || leaf == "kv_cache_free_memory_fraction";
      present = cache.has(leaf) ||
                (sizing && (cache.has("gpu_memory_utilization") || cache.has("kv_cache_free_memory_fraction")));
    } else if (section == "hardware.gpu") {
      present = root.section("hardware", false).section("gpu", false).has(leaf);
    } else if (section == "hardware.topology") {
      present = root.section("hardware", false).section("topology", false).has(leaf);
    } else {
      present = root.section("hardware", false).section("host", false).has(leaf);
    }
    if (!present) scenario.apply_override(key + "=" + value);
  }
}

}  // namespace ks::serving
