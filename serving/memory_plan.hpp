#pragma once
// How a replica's GPU memory divides into weights, activation workspace and KV cache, the way
// vLLM sizes its cache: usable = memory x gpu_memory_utilization; KV = usable - weights - workspace.
// Or as TensorRT-LLM does (free_gpu_memory_fraction): KV = fraction x (memory - weights - workspace).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dtype.hpp"
#include "kernels/model_config.hpp"

namespace ks::serving {

struct MemoryPlan {
  int stage = 0;                // pipeline stage the plan is for
  int first_layer = 0, layers = 0;  // the stage's layers
  double usable_bytes = 0;
  double weight_bytes = 0;      // per GPU
  double workspace_bytes = 0;   // activations at the largest step
  double kv_bytes = 0;          // per GPU
  double kv_bytes_per_token = 0;  // per GPU, all layers on it
  std::int64_t kv_blocks = 0;   // the replica's (kv_ranks x one GPU's)
  std::int64_t kv_tokens = 0;
  // Caches that add up to the replica's: tp with attention data parallelism (every rank caches
  // its own sequences' KV), else 1 (the TP ranks share every token's KV).
  int kv_ranks = 1;
};

struct MemoryInputs {
  double gpu_memory_bytes = 0;
  double gpu_memory_utilization = 0.9;
  // > 0: TensorRT-LLM's sizing, the KV cache takes this fraction of what weights and workspace
  // leave (gpu_memory_utilization is then not used).
  double kv_free_memory_fraction = 0;
  kernels::DType weight_dtype = kernels::DType::BF16;
  kernels::DType kv_dtype = kernels::DType::BF16;
  int tp = 1;
  int pp = 1;  // pipeline stages: each GPU holds its stage's layers only
  std::int64_t block_size = 16;
  std::int64_t max_num_batched_tokens = 8192;
  std::int64_t max_num_seqs = 256;
  // Speculative decoding's proposer on every GPU (pp = 1 only): its weights and the KV bytes
  // per token of its layers, which share the target's block table (serving/speculative.hpp).
  double proposer_weight_bytes = 0;
  double proposer_kv_bytes_per_token = 0;
  // Attention data parallelism (kernels::ParallelConfig::dp_attention; pp = 1): every GPU holds
  // all the weights but the routed experts, of which it holds ceil(experts / tp), and the whole
  // KV (all heads, or MLA's latent) of its own sequences; the replica's cache is tp GPUs' caches.
  bool dp_attention = false;
};

// Throws std::invalid_argument with the numbers when the model does not fit. With pp > 1 it is
// the tightest stage's plan (fewest KV blocks): every stage holds every request's KV for its
// layers, so the replica's cache is as large as the tightest stage's.
MemoryPlan plan_memory(const kernels::ModelConfig& model, const MemoryInputs& in);
// One plan per pipeline stage: its layers' weights (the embedding on the first stage, the LM
// head on the last, kernels::ModelConfig::stage_parameter_count) and KV, the logits workspace on
// the last. Throws with every stage's numbers when one does not fit.
std::vector<MemoryPlan> plan_stage_memory(const kernels::ModelConfig& model, const MemoryInputs& in);

std::string describe_bytes(double bytes);  // "15.00 GiB", "2.00 MiB", "12.00 KiB"

}  // namespace ks::serving
