// `kernelsight check`: reads a scenario with its overrides and elaborates it without simulating,
// so every key, value and combination is checked (what `sweep` runs for each point before it
// simulates any), then prints what the scenario resolved to: the model, the GPUs and how the
// replicas split them, the engine, and each GPU's memory plan (weights, activations, KV cache and
// the KV blocks / tokens that fit), the numbers the simulation will run with.
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "app/cli_options.hpp"
#include "app/commands.hpp"
#include "app/simulation.hpp"
#include "kernels/hf_config.hpp"
#include "kernels/model_config.hpp"
#include "kernels/step_decomposer.hpp"
#include "serving/memory_plan.hpp"

namespace po = boost::program_options;

namespace ks::app {
namespace {

std::string scalar(const YAML::Node& root, std::initializer_list<const char*> path, const std::string& fallback) {
  YAML::Node n;
  n.reset(root);
  for (const char* key : path) {
    const YAML::Node& map = n;  // const lookups never insert
    if (!map.IsMap() || !map[key]) return fallback;
    n.reset(map[key]);  // reset, not operator=: assignment would overwrite the node
  }
  return n.IsScalar() ? n.Scalar() : fallback;
}

std::string bytes_text(double bytes) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f B (%s)", bytes, serving::describe_bytes(bytes).c_str());
  return buf;
}

std::string billions(std::int64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f B", static_cast<double>(n) / 1e9);
  return buf;
}

kernels::DType dtype_of(const std::string& name) {
  const auto d = kernels::parse_dtype(name);
  if (!d) throw std::logic_error("resolved scenario has dtype '" + name + "'");  // checked by Simulation
  return *d;
}

// The resolved scenario, summarised (the Simulation has checked every value and filled defaults).
void print_resolved(const Simulation& sim, const config::Document& scenario, const std::string& scenario_path,
                    const std::vector<std::string>& overrides) {
  const YAML::Node doc = YAML::Load(scenario.resolved_yaml());
  if (const PdParts* pd = sim.disaggregation()) {  // two pools: app/pd_simulation.cpp
    std::cout << describe_disaggregation(*pd, scalar(doc, {"model", "name"}, scalar(doc, {"model", "config"}, "")));
    return;
  }
  // The model, as the Simulation found it: a preset, or model.config relative to the scenario
  // file (to the working directory when an override named it).
  kernels::ModelConfig model;
  const std::string config_path = scalar(doc, {"model", "config"}, "");
  if (!config_path.empty()) {
    std::filesystem::path path(config_path);
    bool from_override = false;
    for (const auto& o : overrides) from_override |= o.rfind("model.config=", 0) == 0 || o.rfind("model=", 0) == 0;
    if (path.is_relative() && !from_override) path = std::filesystem::path(scenario_path).parent_path() / path;
    model = kernels::load_hf_config(path.string());
  } else {
    model = *kernels::find_builtin_model(scalar(doc, {"model", "name"}, ""));
  }
  if (const int block = std::stoi(scalar(doc, {"model", "weight_block_size"}, "-1")); block >= 0)
    model.weight_block_size = block;
  const std::string weight_name = scalar(doc, {"model", "dtype"}, "bf16");
  const kernels::DType weight_dtype = dtype_of(weight_name);
  const std::string kv_name = scalar(doc, {"model", "kv_dtype"}, "auto");
  const kernels::DType kv_dtype = kv_name == "auto" ? kernels::activation_dtype(weight_dtype) : dtype_of(kv_name);

  const int replicas = std::stoi(scalar(doc, {"replicas"}, "1"));
  const int tp = std::stoi(scalar(doc, {"parallel", "tp"}, "1"));
  const int pp = std::stoi(scalar(doc, {"parallel", "pp"}, "1"));
  const auto gpus = sim.gpus();
  const kernels::GpuSpec& gpu = gpus.front()->spec();

  serving::MemoryInputs mem;
  mem.gpu_memory_bytes = gpu.memory_bytes;
  mem.gpu_memory_utilization = std::stod(scalar(doc, {"cache", "gpu_memory_utilization"}, "0.9"));
  mem.kv_free_memory_fraction = std::stod(scalar(doc, {"cache", "kv_cache_free_memory_fraction"}, "0"));
  mem.weight_dtype = weight_dtype;
  mem.kv_dtype = kv_dtype;
  mem.tp = tp;
  mem.pp = pp;
  mem.dp_attention = scalar(doc, {"parallel", "dp_attention"}, "false") == "true";
  mem.block_size = std::stoll(scalar(doc, {"cache", "block_size"}, "16"));
  mem.max_num_batched_tokens = std::stoll(scalar(doc, {"engine", "max_num_batched_tokens"}, "8192"));
  mem.max_num_seqs = std::stoll(scalar(doc, {"engine", "max_num_seqs"}, "256"));
  const std::vector<serving::MemoryPlan> plans = serving::plan_stage_memory(model, mem);

  std::ostringstream out;
  out << "model:    " << model.name << ": " << billions(model.parameter_count()) << " parameters ("
      << model.parameter_count() << "), " << model.num_layers << " layers, hidden " << model.hidden_size
      << ", weights " << weight_name << ", KV cache " << kernels::dtype_name(kv_dtype) << "\n";
  out << "GPUs:     " << gpus.size() << " x " << gpu.name << " (" << gpu.description << ", "
      << serving::describe_bytes(gpu.memory_bytes) << "): " << replicas << (replicas == 1 ? " replica" : " replicas")
      << " x tp " << tp << " x pp " << pp << ", topology " << scalar(doc, {"hardware", "topology", "kind"}, "none")
      << ", kernel tier " << scalar(doc, {"hardware", "gpu", "tier"}, "-") << "\n";
  out << "engine:   " << scalar(doc, {"engine", "kind"}, "?") << ", profile " << scalar(doc, {"profile"}, "none")
      << ", max_num_batched_tokens " << mem.max_num_batched_tokens << ", max_num_seqs " << mem.max_num_seqs
      << ", block_size " << mem.block_size << ", prefix caching "
      << scalar(doc, {"cache", "enable_prefix_caching"}, "?") << "\n";
  out << "workload: " << scalar(doc, {"workload", "kind"}, "?");
  std::string params;
  for (const auto& entry : doc["workload"]) {
    const std::string key = entry.first.Scalar();
    if (key != "kind" && entry.second.IsScalar() && !entry.second.Scalar().empty())
      params += (params.empty() ? "" : ", ") + key + " " + entry.second.Scalar();
  }
  out << (params.empty() ? "" : " (" + params + ")") << "\n";
  out << "memory per GPU: ";
  if (mem.kv_free_memory_fraction > 0)
    out << serving::describe_bytes(plans.front().usable_bytes) << ", KV cache takes "
        << mem.kv_free_memory_fraction << " of what weights and activations leave\n";
  else
    out << mem.gpu_memory_utilization << " x " << serving::describe_bytes(gpu.memory_bytes) << " = "
        << serving::describe_bytes(plans.front().usable_bytes) << " usable\n";
  for (const serving::MemoryPlan& p : plans) {
    const std::string indent = pp > 1 ? "    " : "  ";
    if (pp > 1)
      out << "  stage " << p.stage << " (layers " << p.first_layer << "-" << p.first_layer + p.layers - 1 << "):\n";
    out << indent << "weights:     " << bytes_text(p.weight_bytes) << "\n";
    out << indent << "activations: " << bytes_text(p.workspace_bytes) << "\n";
    out << indent << "KV cache:    " << bytes_text(p.kv_bytes) << ", " << static_cast<long long>(p.kv_bytes_per_token)
        << " B per token\n";
    out << indent << "KV blocks:   " << p.kv_blocks << " of " << mem.block_size << " tokens = " << p.kv_tokens
        << " tokens" << (p.kv_ranks > 1 ? " (per replica: " + std::to_string(p.kv_ranks) + " data-parallel attention ranks' caches)" : "")
        << "\n";
  }
  std::cout << out.str();
}

}  // namespace

int cmd_check(const std::vector<std::string>& args) {
  po::options_description opts("kernelsight check SCENARIO.yaml [--set key=value]... [-q]\n\n"
                               "Checks a scenario and its overrides as `run` would (unknown keys, values,\n"
                               "units, kinds, whether the model fits) without simulating it, then prints\n"
                               "what it resolved to: model, GPUs and parallelism, engine, and the memory\n"
                               "plan of each GPU (weights, activations, KV cache, KV blocks and tokens).\n\noptions");
  std::vector<std::string> overrides;
  std::string scenario_path;
  opts.add_options()("help,h", "show this help")("set,s", po::value(&overrides)->composing(),
                                                 "override a scenario value (repeatable)")(
      "quiet,q", "print only the 'ok:' line");
  po::variables_map vm;
  if (const int rc = parse_options_with_file("check", args, opts, vm, "scenario", scenario_path); rc >= 0) return rc;
  if (scenario_path.empty()) {
    std::cerr << "kernelsight check: no scenario file given\n\n" << opts;
    return kExitBadInput;
  }
  return run_reporting_errors([&] {
    config::Document scenario = config::Document::load_file(scenario_path);
    for (const auto& assignment : overrides) scenario.apply_override(assignment);
    const Simulation sim(scenario);
    std::cout << "ok: " << scenario_path << " (scenario '" << sim.name() << "')\n";
    if (vm.count("quiet") == 0) print_resolved(sim, scenario, scenario_path, overrides);
    return kExitOk;
  });
}

}  // namespace ks::app
