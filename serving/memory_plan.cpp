#include "serving/memory_plan.hpp"

#include "kernels/step_decomposer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ks::serving {

std::string describe_bytes(double bytes) {
  char buf[64];
  const double mag = std::fabs(bytes);
  if (mag >= 1024.0 * 1024.0 * 1024.0)
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  else if (mag >= 1024.0 * 1024.0)
    std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024.0));
  else
    std::snprintf(buf, sizeof buf, "%.2f KiB", bytes / 1024.0);
  return buf;
}

namespace {

// Stage `stage`'s plan; `fits` is false when not even one KV block is left.
MemoryPlan plan_stage(const kernels::ModelConfig& model, const MemoryInputs& in, int stage, bool& fits) {
  MemoryPlan plan;
  const kernels::LayerRange layers = kernels::pp_stage_layers(model.num_layers, stage, in.pp);
  const bool last = stage == in.pp - 1;
  plan.stage = stage;
  plan.first_layer = layers.begin;
  plan.layers = layers.count();
  const bool free_fraction = in.kv_free_memory_fraction > 0;
  plan.usable_bytes = free_fraction ? in.gpu_memory_bytes : in.gpu_memory_bytes * in.gpu_memory_utilization;
  plan.weight_bytes = static_cast<double>(model.stage_parameter_count(layers.count(), stage == 0, last)) *
                      model.weight_element_bytes(in.weight_dtype) / in.tp;
  if (in.dp_attention) {
    // Replicated but for the routed experts, ceil(E / tp) of which each GPU holds.
    const double routed = static_cast<double>(model.routed_expert_parameter_count());
    const double local = static_cast<double>((model.num_experts + in.tp - 1) / in.tp) / model.num_experts;
    plan.weight_bytes = (static_cast<double>(model.parameter_count()) - routed + routed * local) *
                        model.weight_element_bytes(in.weight_dtype);
  }
  if (in.proposer_weight_bytes > 0) plan.weight_bytes += in.proposer_weight_bytes;
  // Peak activations of the largest step: the hidden states and the MLP's intermediate tensors of
  // the batched tokens (16-bit), plus fp32 logits for the sampled sequences (last stage).
  const double tokens = static_cast<double>(in.max_num_batched_tokens);
  // (Under attention data parallelism one rank may run a whole budget's prefill chunk, unsharded.)
  const double per_token = 2.0 * (4.0 * model.hidden_size + 2.0 * model.intermediate_size / (in.dp_attention ? 1 : in.tp));
  plan.workspace_bytes = tokens * per_token + (last ? 4.0 * static_cast<double>(in.max_num_seqs) * model.vocab_size : 0.0);
  plan.kv_bytes = plan.usable_bytes - plan.weight_bytes - plan.workspace_bytes;
  if (free_fraction && plan.kv_bytes > 0) plan.kv_bytes *= in.kv_free_memory_fraction;
  plan.kv_bytes_per_token = model.kv_bytes_per_token(in.kv_dtype) / model.num_layers * layers.count() /
                            (in.dp_attention ? 1 : model.kv_cache_split(in.tp));
  plan.kv_ranks = in.dp_attention ? in.tp : 1;
  if (in.proposer_kv_bytes_per_token > 0) plan.kv_bytes_per_token += in.proposer_kv_bytes_per_token;
  const double block_bytes = plan.kv_bytes_per_token * static_cast<double>(in.block_size);
  fits = plan.kv_bytes >= block_bytes;
  // The block manager tracks every block (int32 ids, a few bytes each): a KV cache of more blocks
  // than this comes from an absurd GPU memory or a tiny block, not from real hardware.
  constexpr double kMaxBlocks = 1 << 25;
  if (fits && plan.kv_bytes / block_bytes > kMaxBlocks)
    throw std::invalid_argument("the KV cache would hold " + describe_bytes(plan.kv_bytes) + " = " +
                                std::to_string(plan.kv_bytes / block_bytes) + " blocks of " +
                                std::to_string(in.block_size) + " tokens, more than the 33554432 the simulator "
                                "tracks: check the GPU memory (" + describe_bytes(in.gpu_memory_bytes) +
                                ") or raise cache.block_size");
  plan.kv_blocks = fits ? static_cast<std::int64_t>(std::floor(plan.kv_bytes / block_bytes)) * plan.kv_ranks : 0;
  plan.kv_tokens = plan.kv_blocks * in.block_size;
  return plan;
}

std::string usable_text(const MemoryInputs& in, const MemoryPlan& p) {
  if (in.kv_free_memory_fraction > 0) return describe_bytes(in.gpu_memory_bytes) + " GPU memory";
  return describe_bytes(in.gpu_memory_bytes) + " x " + std::to_string(in.gpu_memory_utilization).substr(0, 4) +
         " utilisation = " + describe_bytes(p.usable_bytes) + " usable";
}

}  // namespace

std::vector<MemoryPlan> plan_stage_memory(const kernels::ModelConfig& model, const MemoryInputs& in) {
  std::vector<MemoryPlan> plans;
  bool all_fit = true;
  for (int s = 0; s < in.pp; ++s) {
    bool fits = true;
    plans.push_back(plan_stage(model, in, s, fits));
    all_fit = all_fit && fits;
  }
  if (all_fit) return plans;
  const double block = plans.front().kv_bytes_per_token * static_cast<double>(in.block_size);
  if (in.pp == 1) {
    const MemoryPlan& p = plans.front();
    throw std::invalid_argument("model '" + model.name + "' does not fit: " + usable_text(in, p) + ", weights need " +
                                describe_bytes(p.weight_bytes) + " and activations " +
                                describe_bytes(p.workspace_bytes) + " per GPU, leaving " +
                                describe_bytes(p.kv_bytes) + " for the KV cache (one block needs " +
                                describe_bytes(block) + ")");
  }
  std::string stages;
  for (const MemoryPlan& p : plans)
    stages += "; stage " + std::to_string(p.stage) + " (layers " + std::to_string(p.first_layer) + "-" +
              std::to_string(p.first_layer + p.layers - 1) + "): weights " + describe_bytes(p.weight_bytes) +
              ", activations " + describe_bytes(p.workspace_bytes) + ", leaving " + describe_bytes(p.kv_bytes) +
              " for the KV cache (one block needs " +
              describe_bytes(p.kv_bytes_per_token * static_cast<double>(in.block_size)) + ")";
  throw std::invalid_argument("model '" + model.name + "' does not fit in " + std::to_string(in.pp) +
                              " pipeline stages: " + usable_text(in, plans.front()) + " per GPU" + stages);
}

MemoryPlan plan_memory(const kernels::ModelConfig& model, const MemoryInputs& in) {
  const std::vector<MemoryPlan> plans = plan_stage_memory(model, in);
  return *std::min_element(plans.begin(), plans.end(),
                           [](const MemoryPlan& a, const MemoryPlan& b) { return a.kv_blocks < b.kv_blocks; });
}

}  // namespace ks::serving
