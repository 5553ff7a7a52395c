#include "app/scenario_spec.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "hw/host/launch_policy.hpp"
#include "hw/gpu/catalog_gpu.hpp"
#include "hw/interconnect/topology_presets.hpp"
#include "kernels/gpu_catalog.hpp"
#include "kernels/dtype.hpp"
#include "kernels/hf_config.hpp"
#include "kernels/spec_error.hpp"
#include "kernels/step_decomposer.hpp"
#include "serving/engine_profile.hpp"

namespace ks::app {
namespace {

std::vector<std::string> profile_choices() {
  std::vector<std::string> names{"none"};
  for (const auto& p : serving::engine_profiles()) names.push_back(p.name);
  return names;
}

config::Schema scenario_schema() {
  config::Schema s("A serving scenario: model, hardware, engine, workload and outputs.");
  s.string("name", std::string("scenario"), "scenario name (used for the default output folder)")
      .integer("seed", 0, "global seed; every component draws from its own stream derived from it", 0)
      .integer("replicas", 1, "engine replicas behind the router", 1, 4096)
      .choice("profile", profile_choices(), std::string("none"),
              "engine profile: host-overhead and scheduler defaults of that engine (docs/serving.md)");
  return s;
}

std::vector<std::string> dtype_choices() { return {"fp32", "fp16", "bf16", "fp8", "int8", "int4", "fp4"}; }

config::Schema model_schema() {
  std::string known;
  for (const auto& n : kernels::builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
  config::Schema s("The served model.");
  s.string("name", std::string(""), "model preset (" + known + "); or set `config`")
      .string("config", std::string(""),
              "Hugging Face config.json of the model (relative to the scenario file); replaces `name`")
      .choice("dtype", dtype_choices(), std::string("bf16"),
              "weight dtype (fp4: NVFP4 with W4A4 GEMMs, on GPUs with fp4 tensor cores)")
      .integer("weight_block_size", -1,
               "fp8 weights with one fp32 scale per NxN block and per-token-group activation quantisation before "
               "each GEMM (DeepSeek-V3's quantization_config weight_block_size [128, 128]); -1: as the model's "
               "config.json says, 0: per-tensor scales; needs dtype fp8",
               -1, 65536)
      .choice("kv_dtype", [] {
        auto c = dtype_choices();
        c.insert(c.begin(), "auto");
        c.pop_back();  // no fp4 KV cache
        return c;
      }(), std::string("auto"), "KV-cache dtype; auto = activation dtype (16-bit)");
  return s;
}

config::Schema cache_schema() {
  config::Schema s("KV-cache sizing, as vLLM's cache config.");
  s.integer("block_size", 16, "tokens per KV-cache block", 1, 1024)
      .number("gpu_memory_utilization", 0.9, "fraction of GPU memory the engine may use", 0.01, 1.0)
      .number("kv_cache_free_memory_fraction", 0.0,
              "TensorRT-LLM sizing (free_gpu_memory_fraction): the KV cache takes this fraction of the memory "
              "weights and activations leave, instead of gpu_memory_utilization; 0: off",
              0.0, 1.0)
      .flag("enable_prefix_caching", true, "reuse the KV blocks of shared prompt prefixes (vLLM v1 default: on)")
      .quantity("host_kv_bytes", config::Dim::Bytes, std::string("0B"),
                "host-memory KV tier per GPU (vLLM CPU offloading, LMCache, SGLang HiCache): cached blocks HBM "
                "evicts are kept there and loaded back on a prefix hit; 0: off",
                0.0, false)
      .quantity("host_kv_link_bandwidth", config::Dim::Bandwidth, std::string("0B/s"),
                "GPU<->host bandwidth per direction for the host KV tier's copies (C2C on a superchip); "
                "0: 40% of the GPU's pcie_bandwidth (half of it per direction at 80% efficiency: ~51GB/s on Gen5 x16)",
                0.0, false)
      .quantity("host_kv_link_latency", config::Dim::Time, std::string("10us"),
                "fixed cost of each host KV copy", 0.0, false);
  return s;
}

config::Schema output_schema() {
  config::Schema s("Where results go.");
  s.string("dir", std::string(""), "output folder (default: results/<name>)")
      .number("price_per_gpu_hour", 0.0,
              "price of one GPU-hour (any currency): summary.json then gives the run's cost and its cost per "
              "million output and total tokens; 0 = not reported",
              0.0);
  return s;
}

config::Schema parallel_schema() {
  config::Schema s("How each replica's model is split across GPUs.");
  s.integer("tp", 1, "tensor-parallel GPUs per replica (all-reduces travel over hardware.topology)", 1, 512)
      .integer("pp", 1,
               "pipeline-parallel stages per replica: contiguous blocks of layers, each on its own tp GPUs; "
               "activations travel stage to stage over hardware.topology",
               1, 512)
      .integer("ep", 1,
               "expert-parallel ranks (MoE models): 1, or tp to place the routed experts round-robin over the TP "
               "GPUs, tokens reaching them by all-to-all dispatch and combine",
               1, 512)
      .flag("dp_attention", false,
            "attention data parallelism (SGLang --enable-dp-attention, vLLM DP attention + EP; MoE models, ep = tp > 1): "
            "each of the tp GPUs holds the whole attention, dense and shared weights and runs its own share of the "
            "sequences with its own KV cache; the routed experts stay expert-parallel (docs/serving.md)");
  return s;
}

config::Schema moe_schema() {
  config::Schema s("Mixture-of-experts routing.");
  s.number("imbalance", 1.0,
           "routing imbalance under parallel.ep: rows on the busiest rank / mean rows per rank (1 = uniform); "
           "the busiest rank sets the step time",
           1.0, 512.0);
  return s;
}

}  // namespace

interconnect::ScaleUpLinks scale_up_links(const kernels::GpuSpec& gpu) {
  return {gpu.name, gpu.vendor, gpu.generation, gpu.scale_up, gpu.nvlink_bandwidth, gpu.pcie_bandwidth};
}

interconnect::DefaultFabric default_fabric_of(const std::string& gpu_kind, const config::Params& gpu_params) {
  if (gpu_kind == "catalog") return interconnect::default_fabric(scale_up_links(hw::catalog_gpu_spec(gpu_params)));
  // Other GPU kinds (co-simulated GPUs) may name a catalogue spec; else an H100 SXM's system.
  const kernels::GpuSpec* spec = gpu_params.has("spec") ? kernels::find_builtin_gpu(gpu_params.string("spec")) : nullptr;
  return interconnect::default_fabric(scale_up_links(spec ? *spec : *kernels::find_builtin_gpu("h100_sxm")));
}

namespace {

// A tp the model cannot be split by, or more stages than layers, is a scenario error, reported
// before elaboration.
void check_parallel(const kernels::ModelConfig& model, kernels::DType wdt, kernels::DType kvdt,
                    const kernels::ParallelConfig& par, const config::Params& p, const config::Params& moe) {
  const int tp = par.tp, pp = par.pp;
  if (pp > model.num_layers)
    throw config::ConfigError(p.mark("pp"), "parallel.pp",
                              "model '" + model.name + "' has " + std::to_string(model.num_layers) +
                                  " layers: at most that many pipeline stages, got " + std::to_string(pp));
  kernels::StepBatch probe;
  probe.decode_contexts.push_back(1);
  try {
    kernels::decompose_step(model, probe, wdt, kvdt, {tp, 1, par.ep, par.moe_imbalance, par.dp_attention});
    if (par.dp_attention && pp > 1)
      throw std::invalid_argument("model '" + model.name + "': dp_attention with pipeline parallelism (pp > 1) is not modelled");
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find("imbalance") != std::string::npos)
      throw config::ConfigError(moe.mark("imbalance"), "moe.imbalance", e.what());
    if (par.dp_attention && std::string(e.what()).find("dp_attention") != std::string::npos)
      throw config::ConfigError(p.mark("dp_attention"), "parallel.dp_attention", e.what());
    const bool ep = par.ep != 1;
    throw config::ConfigError(p.mark(ep ? "ep" : "tp"), ep ? "parallel.ep" : "parallel.tp", e.what());
  }
}

kernels::DType dtype_param(const config::Params& p, const std::string& key) {
  return *kernels::parse_dtype(p.string(key));
}

// engine.max_model_len: read only when given, so that scenarios without it resolve (and write
// config.resolved.yaml) as before.
config::Schema max_model_len_schema() {
  config::Schema s("Context length.");
  s.integer("max_model_len", std::nullopt,
            "longest prompt + output a request may have (vLLM's --max-model-len); default: the model's "
            "max_position_embeddings",
            1);
  return s;
}

config::Schema speculative_schema() {
  config::Schema s(
      "Speculative decoding under any engine.kind but multi-step: the proposer, k drafts per step and their "
      "acceptance (docs/serving.md). The context length is engine.max_model_len (default: the model's "
      "max_position_embeddings).");
  s.choice("method", {"draft_model", "ngram", "eagle", "mtp"}, std::nullopt,
           "proposer: a smaller draft model, n-gram prompt lookup (CPU), an EAGLE head or an MTP module")
      .integer("num_speculative_tokens", std::nullopt, "drafts k proposed and verified per decode step", 1, 32)
      .number("acceptance_rate", 0.0,
              "probability that each draft is accepted given the previous one was (same at every position)", 0.0, 1.0)
      .string("acceptance", std::string(""),
              "per-position conditional acceptance, k numbers in [0, 1] separated by commas or spaces, e.g. "
              "\"0.8, 0.65, 0.55\" (instead of acceptance_rate)")
      .string("draft_model", std::string(""), "draft_model: model preset of the draft (e.g. llama-3.2-1b)")
      .string("draft_config", std::string(""),
              "draft_model: Hugging Face config.json of the draft (relative to the scenario file)")
      .quantity("ngram_cpu_time", config::Dim::Time, std::string("10us"),
                "ngram: host CPU time of the prompt lookup per drafting sequence per step (rough figure)", 0.0, false);
  return s;
}

// "0.8, 0.65 0.55" -> {0.8, 0.65, 0.55}; ConfigError naming the item otherwise.
std::vector<double> parse_acceptance_list(const std::string& text, const config::SourceMark& mark,
                                          const std::string& key) {
  std::vector<double> values;
  std::string item;
  auto flush = [&] {
    if (item.empty()) return;
    double v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size())
      throw config::ConfigError(mark, key, "item " + std::to_string(values.size() + 1) + " '" + item +
                                               "' is not a number (expected probabilities in [0, 1] separated by "
                                               "commas or spaces, e.g. \"0.8, 0.65, 0.55\")");
    if (!(v >= 0.0 && v <= 1.0))
      throw config::ConfigError(mark, key, "item " + std::to_string(values.size() + 1) + " = " + item +
                                               " is not a probability in [0, 1]");
    values.push_back(v);
    item.clear();
  };
  for (const char c : text) {
    if (c == ',' || c == ' ' || c == '\t') flush();
    else item += c;
  }
  flush();
  return values;
}

serving::SpecDecodeConfig parse_speculative(const config::Section& sec, const kernels::ModelConfig& target,
                                            kernels::DType wdt, kernels::DType kvdt, int tp, int pp,
                                            const config::Params& engine_p) {
  const bool rate_given = sec.has("acceptance_rate"), list_given = sec.has("acceptance");
  const bool draft_given = sec.has("draft_model"), config_given = sec.has("draft_config");
  const config::Params p = sec.resolve(speculative_schema());
  serving::SpecDecodeConfig spec;
  const std::string method = p.string("method");
  spec.method = method == "draft_model" ? serving::SpecMethod::DraftModel
                : method == "ngram"     ? serving::SpecMethod::Ngram
                : method == "eagle"     ? serving::SpecMethod::Eagle
                                        : serving::SpecMethod::Mtp;
  spec.num_speculative_tokens = static_cast<int>(p.integer("num_speculative_tokens"));
  const int k = spec.num_speculative_tokens;
  const std::string path = sec.path();
  if (pp > 1)
    throw config::ConfigError(p.mark("method"), path + ".method",
                              "speculative decoding with pipeline parallelism (parallel.pp > 1) is not modelled");
  if (engine_p.has("num_scheduler_steps") && engine_p.integer("num_scheduler_steps") > 1)
    throw config::ConfigError(p.mark("method"), path + ".method",
                              "speculative decoding with multi-step scheduling (engine.num_scheduler_steps > 1) is "
                              "not modelled (vLLM rejects the combination too)");
  if (!rate_given && !list_given) {
    // A misspelt acceptance key is the likelier mistake: name it (check_unused would, later).
    const config::Schema schema = speculative_schema();
    std::vector<std::string> known;
    for (const config::ParamSpec& spec_param : schema.params()) known.push_back(spec_param.name);
    for (const std::string& key : sec.keys())
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        const std::string close = config::did_you_mean(key, known);
        throw config::ConfigError(sec.mark(key), path + "." + key,
                                  "unknown key" + (close.empty() ? std::string() : " (did you mean '" + close + "'?)"));
      }
  }
  if (rate_given == list_given)
    throw config::ConfigError(sec.mark(), path,
                              rate_given ? "give acceptance_rate or acceptance, not both"
                                         : "missing the acceptance model: acceptance_rate (one probability) or "
                                           "acceptance (one per draft position)");
  if (rate_given) {
    spec.acceptance = serving::AcceptanceModel::constant(p.number("acceptance_rate"), k);
  } else {
    std::vector<double> values = parse_acceptance_list(p.string("acceptance"), p.mark("acceptance"), path + ".acceptance");
    if (static_cast<int>(values.size()) != k)
      throw config::ConfigError(p.mark("acceptance"), path + ".acceptance",
                                "has " + std::to_string(values.size()) + " positions, expected " + std::to_string(k) +
                                    " (num_speculative_tokens)");
    spec.acceptance = serving::AcceptanceModel(std::move(values));
  }
  const bool wants_draft = spec.method == serving::SpecMethod::DraftModel;
  if (!wants_draft && (draft_given || config_given))
    throw config::ConfigError(p.mark(draft_given ? "draft_model" : "draft_config"),
                              path + (draft_given ? ".draft_model" : ".draft_config"),
                              "only for method draft_model (" + method + " drafts without a separate model)");
  if (spec.method == serving::SpecMethod::Ngram) {
    spec.ngram_seconds_per_sequence = p.number("ngram_cpu_time");
    return spec;
  }
  if (!wants_draft) {
    spec.draft = serving::speculative_head(target);
    spec.head_fc = true;
    return spec;
  }
  if (draft_given == config_given)
    throw config::ConfigError(sec.mark(), path,
                              draft_given ? "give draft_model or draft_config, not both"
                                          : "method draft_model needs the draft: draft_model (a preset, e.g. "
                                            "llama-3.2-1b) or draft_config (a config.json)");
  if (config_given) {
    const config::SourceMark& mark = p.mark("draft_config");
    std::filesystem::path file(p.string("draft_config"));
    if (file.is_relative() && mark.line > 0) file = std::filesystem::path(mark.origin).parent_path() / file;
    try {
      spec.draft = kernels::load_hf_config(file.string());
    } catch (const kernels::SpecError& e) {
      throw config::ConfigError(mark, path + ".draft_config", e.what());
    }
  } else {
    const kernels::ModelConfig* draft = kernels::find_builtin_model(p.string("draft_model"));
    if (draft == nullptr) {
      std::string known;
      for (const auto& n : kernels::builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
      throw config::ConfigError(p.mark("draft_model"), path + ".draft_model",
                                "unknown model '" + p.string("draft_model") + "' (known: " + known + ")");
    }
    spec.draft = *draft;
  }
  const std::string key = path + (config_given ? ".draft_config" : ".draft_model");
  const config::SourceMark& mark = p.mark(config_given ? "draft_config" : "draft_model");
  if (spec.draft.vocab_size != target.vocab_size)
    throw config::ConfigError(mark, key,
                              "draft '" + spec.draft.name + "' has a vocabulary of " +
                                  std::to_string(spec.draft.vocab_size) + " tokens, the target '" + target.name +
                                  "' " + std::to_string(target.vocab_size) +
                                  ": a draft model must share the target's tokenizer");
  kernels::StepBatch probe;
  probe.decode_contexts.push_back(1);
  try {
    kernels::decompose_step(spec.draft, probe, wdt, kvdt, {tp, 1});
  } catch (const std::invalid_argument& e) {
    throw config::ConfigError(mark, key, std::string("the draft runs with the target's parallel.tp: ") + e.what());
  }
  return spec;
}

}  // namespace

std::vector<std::pair<std::string, config::Schema>> fixed_scenario_sections() {
  return {{"", scenario_schema()},
          {"model", model_schema()},
          {"parallel", parallel_schema()},
          {"moe", moe_schema()},
          {"cache", cache_schema()},
          {"output", output_schema()},
          {"engine.speculative", speculative_schema()},
          {"disaggregation", disaggregation_schema()},  // app/pd_simulation.cpp
          {"disaggregation.prefill", pd_pool_schema("prefill")},
          {"disaggregation.decode", pd_pool_schema("decode")}};
}

ScenarioSpec read_scenario(config::Document& scenario) {
  serving::apply_engine_profile(scenario);  // fills in defaults before anything is read
  config::Section root = scenario.root();
  const config::Params top = root.resolve(scenario_schema());
  ScenarioSpec s;
  s.name = top.string("name");
  s.seed = static_cast<std::uint64_t>(top.integer("seed"));
  s.replicas = static_cast<int>(top.integer("replicas"));

  // Model.
  const config::Section model_sec = root.section("model");
  const config::Params model_p = model_sec.resolve(model_schema());
  kernels::ModelConfig loaded;  // model.config, when given
  const kernels::ModelConfig* model = nullptr;
  if (!model_p.string("config").empty()) {
    const config::SourceMark& mark = model_p.mark("config");
    std::filesystem::path path(model_p.string("config"));
    if (path.is_relative() && mark.line > 0) path = std::filesystem::path(mark.origin).parent_path() / path;
    try {
      loaded = kernels::load_hf_config(path.string());
    } catch (const kernels::SpecError& e) {
      throw config::ConfigError(mark, "model.config", e.what());
    }
    model = &loaded;
  } else {
    model = kernels::find_builtin_model(model_p.string("name"));
  }
  if (model == nullptr) {
    std::string known;
    for (const auto& n : kernels::builtin_model_names()) known += (known.empty() ? "" : ", ") + n;
    throw config::ConfigError(model_p.mark("name"), "model.name",
                              "unknown model '" + model_p.string("name") + "' (known: " + known + ")");
  }
  const kernels::DType weight_dtype = dtype_param(model_p, "dtype");
  if (const std::int64_t block = model_p.integer("weight_block_size"); block >= 0) {
    if (block > 0 && weight_dtype != kernels::DType::FP8)
      throw config::ConfigError(model_p.mark("weight_block_size"), "model.weight_block_size",
                                "block-scaled weights are fp8: expected model.dtype: fp8 (got " +
                                    model_p.string("dtype") + "), or 0 / -1");
    if (model != &loaded) loaded = *model;
    loaded.weight_block_size = static_cast<int>(block);
    model = &loaded;
  }
  const kernels::DType kv_dtype = model_p.string("kv_dtype") == "auto" ? kernels::activation_dtype(weight_dtype)
                                                                        : dtype_param(model_p, "kv_dtype");

  // Hardware kinds.
  const config::Section hw_sec = root.section("hardware");
  const config::Section gpu_sec = hw_sec.section("gpu");
  const auto& gpu_entry = hw::gpu_registry().get(gpu_sec.kind("catalog"), gpu_sec.mark("kind"), "hardware.gpu.kind");
  const config::Params gpu_p = gpu_sec.resolve(gpu_entry.schema);
  const config::Params par_p = root.section("parallel", false).resolve(parallel_schema());
  const int tp = static_cast<int>(par_p.integer("tp"));
  const int pp = static_cast<int>(par_p.integer("pp"));
  const config::Params moe_p = root.section("moe", false).resolve(moe_schema());
  const kernels::ParallelConfig parallel{tp, pp, static_cast<int>(par_p.integer("ep")), moe_p.number("imbalance"),
                                         par_p.flag("dp_attention")};
  check_parallel(*model, weight_dtype, kv_dtype, parallel, par_p, moe_p);
  config::Section topo_sec = hw_sec.section("topology", false);
  // No topology named: the GPU's measured system, or the fabric transferred from its spec sheet,
  // for the keys the scenario leaves unset.
  const std::optional<interconnect::DefaultFabric> fabric =
      topo_sec.has("kind") ? std::nullopt : std::optional(default_fabric_of(gpu_sec.kind("catalog"), gpu_p));
  const std::string topo_kind = topo_sec.kind(fabric ? std::optional(fabric->kind) : std::nullopt);
  const auto& topo_entry = interconnect::topology_registry().get(topo_kind, topo_sec.mark("kind"), "hardware.topology.kind");
  const config::Params topo_p =
      topo_sec.resolve(fabric ? interconnect::default_fabric_schema(*fabric) : topo_entry.schema);
  std::shared_ptr<interconnect::Topology> topology = topo_entry.make(topo_p);
  if (topology->num_gpus() < tp * pp)
    throw config::ConfigError(par_p.mark(pp > 1 ? "pp" : "tp"), pp > 1 ? "parallel.pp" : "parallel.tp",
                              "a replica needs tp x pp = " + std::to_string(tp) + " x " + std::to_string(pp) +
                                  " GPUs, topology '" + topo_kind + "' has " + std::to_string(topology->num_gpus()) +
                                  " (" + std::to_string(topology->nodes()) + " x " +
                                  std::to_string(topology->gpus_per_node()) + "); lower it or raise hardware.topology.nodes");
  const int gpus_needed = s.replicas * tp * pp;
  if (topology->num_gpus() < gpus_needed)
    throw config::ConfigError(topo_p.mark("nodes"), "hardware.topology.nodes",
                              "topology '" + topo_kind + "' has " + std::to_string(topology->num_gpus()) +
                                  " GPUs (" + std::to_string(topology->nodes()) + " x " +
                                  std::to_string(topology->gpus_per_node()) + "), the scenario needs " +
                                  std::to_string(gpus_needed) + " (replicas x parallel.tp x parallel.pp); raise nodes");
  // hardware.interconnect: read only when given, so a scenario without it resolves as before
  // (the built-in fabric).
  const hw::InterconnectRegistry::Entry* ic_entry = nullptr;
  std::optional<config::Params> ic_p;
  if (hw_sec.has("interconnect")) {
    const config::Section ic_sec = hw_sec.section("interconnect");
    ic_entry = &hw::interconnect_registry().get(ic_sec.kind("fabric"), ic_sec.mark("kind"), "hardware.interconnect.kind");
    ic_p = ic_sec.resolve(ic_entry->schema);
  }
  // hardware.host: the kind picks the engine's software overheads (serving/host_overheads.hpp,
  // set by the engine profile); the same section carries the host's launch keys (hardware).
  const config::Section host_sec = hw_sec.section("host", false);
  const auto& host_entry =
      serving::host_overheads_registry().get(host_sec.kind("fixed_overhead"), host_sec.mark("kind"), "hardware.host.kind");
  config::Schema host_schema = host_entry.schema;
  hw::add_launch_params(host_schema);
  const config::Params host_p = host_sec.resolve(host_schema);

  // Engine and cache.
  const config::Section engine_sec = root.section("engine", false);
  const auto& sched_entry =
      serving::scheduler_registry().get(engine_sec.kind("vllm_v1"), engine_sec.mark("kind"), "engine.kind");
  const config::Params engine_p = engine_sec.resolve(sched_entry.schema);
  if (engine_p.has("num_scheduler_steps") && engine_p.integer("num_scheduler_steps") > 1) {
    const auto& mark = engine_p.mark("num_scheduler_steps");
    if (pp > 1)
      throw config::ConfigError(mark, "engine.num_scheduler_steps",
                                "multi-step scheduling with pipeline parallelism (parallel.pp > 1) is not modelled; use 1");
    if (engine_p.flag("enable_chunked_prefill"))
      throw config::ConfigError(mark, "engine.num_scheduler_steps",
                                "multi-step scheduling with chunked prefill (vLLM >= 0.6.2) is not modelled; use 1 or "
                                "set engine.enable_chunked_prefill: false");
  }
  // Context length: vLLM's max_model_len, the model's max_position_embeddings unless the
  // scenario lowers it; a larger value is an error (vLLM needs VLLM_ALLOW_LONG_MAX_MODEL_LEN).
  const bool caps_at_model = serving::profile_caps_at_model_context(top.string("profile"));
  s.max_model_len = caps_at_model ? model->max_position_embeddings : std::numeric_limits<std::int64_t>::max();
  if (engine_sec.has("max_model_len")) {
    const config::Params len_p = engine_sec.resolve(max_model_len_schema());
    const std::int64_t len = len_p.integer("max_model_len");
    if (caps_at_model && len > model->max_position_embeddings)
      throw config::ConfigError(len_p.mark("max_model_len"), "engine.max_model_len",
                                std::to_string(len) + " is longer than model '" + model->name +
                                    "' supports (max_position_embeddings = " +
                                    std::to_string(model->max_position_embeddings) + ")");
    s.max_model_len = len;
    s.max_model_len_given = true;
  }
  if (parallel.dp_attention && engine_sec.has("speculative"))
    throw config::ConfigError(par_p.mark("dp_attention"), "parallel.dp_attention",
                              "speculative decoding (engine.speculative) with attention data parallelism is not modelled");
  if (engine_sec.has("speculative"))
    s.spec_decode = parse_speculative(engine_sec.section("speculative"), *model, weight_dtype, kv_dtype, tp, pp, engine_p);
  const config::Section cache_sec = root.section("cache", false);
  const bool utilization_given = cache_sec.has("gpu_memory_utilization");  // before resolve adds the default
  const config::Params cache_p = cache_sec.resolve(cache_schema());
  if (parallel.dp_attention && cache_p.number("host_kv_bytes") > 0)
    throw config::ConfigError(cache_p.mark("host_kv_bytes"), "cache.host_kv_bytes",
                              "a host KV tier with attention data parallelism (parallel.dp_attention) is not modelled; use 0B");
  if (cache_p.number("kv_cache_free_memory_fraction") > 0 && utilization_given)
    throw config::ConfigError(cache_p.mark("kv_cache_free_memory_fraction"), "cache.kv_cache_free_memory_fraction",
                              "sizes the KV cache instead of cache.gpu_memory_utilization (also given at " +
                                  cache_p.mark("gpu_memory_utilization").str() + "): set only one");

  // Workload and router.
  const config::Section wl_sec = root.section("workload");
  const auto& wl_entry = serving::workload_registry().get(wl_sec.kind(), wl_sec.mark("kind"), "workload.kind");
  const config::Params wl_p = wl_sec.resolve(wl_entry.schema);
  s.workload_mark = wl_sec.mark();
  s.reject_long_requests = wl_sec.kind() == "trace";
  if (wl_p.has("num_requests")) s.expected_requests = wl_p.integer("num_requests");  // 0: by duration / whole trace
  const config::Section router_sec = root.section("router", false);
  const auto& router_entry =
      serving::router_registry().get(router_sec.kind("round_robin"), router_sec.mark("kind"), "router.kind");
  const config::Params router_p = router_sec.resolve(router_entry.schema);

  const config::Params out_p = root.section("output", false).resolve(output_schema());
  s.output_dir = out_p.string("dir").empty() ? "results/" + s.name : out_p.string("dir");
  s.price_per_gpu_hour = out_p.number("price_per_gpu_hour");

  // Prefill/decode disaggregation (app/pd_simulation.cpp), read only when given.
  if (root.has("disaggregation"))
    s.disaggregation = parse_disaggregation(root, PdParseInputs{&gpu_entry, &gpu_p, &par_p, &cache_p, &topo_p, model,
                                                       weight_dtype, kv_dtype, topology.get()});

  // Every section has been read: anything left is a misspelt or unsupported key.
  scenario.check_unused();

  s.model = std::make_shared<const kernels::ModelConfig>(*model);
  s.model_p = model_p;
  s.weight_dtype = weight_dtype;
  s.kv_dtype = kv_dtype;
  s.gpu_entry = &gpu_entry;
  s.gpu_p = gpu_p;
  s.par_p = par_p;
  s.parallel = parallel;
  s.topology_kind = topo_kind;
  s.topology = std::move(topology);
  s.topo_p = topo_p;
  s.interconnect_entry = ic_entry;
  s.interconnect_p = std::move(ic_p);
  s.host_entry = &host_entry;
  s.host_p = host_p;
  s.scheduler_entry = &sched_entry;
  s.engine_p = engine_p;
  s.cache_p = cache_p;
  s.workload_entry = &wl_entry;
  s.workload_p = wl_p;
  s.router_entry = &router_entry;
  s.router_p = router_p;
  return s;
}

}  // namespace ks::app
