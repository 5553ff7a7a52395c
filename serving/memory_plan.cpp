#include "serving/memory_plan.hpp"

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

MemoryPlan plan_memory(const kernels::ModelConfig& model, const MemoryInputs& in) {
  MemoryPlan plan;
  plan.usable_bytes = in.gpu_memory_bytes * in.gpu_memory_utilization;
  plan.weight_bytes = model.weight_bytes(in.weight_dtype) / in.tp;
  // Peak activations of the largest step: the hidden states and the MLP's intermediate tensors of
  // the batched tokens (16-bit), plus fp32 logits for the sampled sequences.
  const double tokens = static_cast<double>(in.max_num_batched_tokens);
  const double per_token = 2.0 * (4.0 * model.hidden_size + 2.0 * model.intermediate_size / in.tp);
  plan.workspace_bytes = tokens * per_token + 4.0 * static_cast<double>(in.max_num_seqs) * model.vocab_size;
  plan.kv_bytes = plan.usable_bytes - plan.weight_bytes - plan.workspace_bytes;
  plan.kv_bytes_per_token = model.kv_bytes_per_token(in.kv_dtype) / in.tp;
  const double block_bytes = plan.kv_bytes_per_token * static_cast<double>(in.block_size);
  if (plan.kv_bytes < block_bytes) {
    throw std::invalid_argument(
        "model '" + model.name + "' does not fit: " + describe_bytes(in.gpu_memory_bytes) + " x " +
        std::to_string(in.gpu_memory_utilization).substr(0, 4) + " utilisation = " +
        describe_bytes(plan.usable_bytes) + " usable, weights need " + describe_bytes(plan.weight_bytes) +
        " and activations " + describe_bytes(plan.workspace_bytes) + " per GPU, leaving " +
        describe_bytes(plan.kv_bytes) + " for the KV cache (one block needs " +
        describe_bytes(block_bytes) + ")");
  }
  // The block manager tracks every block (int32 ids, a few bytes each): a KV cache of more blocks
  // than this comes from an absurd GPU memory or a tiny block, not from real hardware.
  constexpr double kMaxBlocks = 1 << 25;
  if (plan.kv_bytes / block_bytes > kMaxBlocks)
    throw std::invalid_argument("the KV cache would hold " + describe_bytes(plan.kv_bytes) + " = " +
                                std::to_string(plan.kv_bytes / block_bytes) + " blocks of " +
                                std::to_string(in.block_size) + " tokens, more than the 33554432 the simulator "
                                "tracks: check the GPU memory (" + describe_bytes(in.gpu_memory_bytes) +
                                ") or raise cache.block_size");
  plan.kv_blocks = static_cast<std::int64_t>(std::floor(plan.kv_bytes / block_bytes));
  plan.kv_tokens = plan.kv_blocks * in.block_size;
  return plan;
}

}  // namespace ks::serving
