#pragma once
// Hugging Face config.json -> ModelConfig, for the decoder families we model:
// LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, PhiForCausalLM,
// InternLMForCausalLM, InternLM2ForCausalLM, the original Qwen (QWenLMHeadModel), Qwen3ForCausalLM,
// Qwen3MoeForCausalLM and DeepseekV2/V3ForCausalLM (MLA, routed + shared experts).
#include <string>
#include <string_view>
#include <vector>

#include "kernels/model_config.hpp"

namespace ks::kernels {

// Reads and parses the file. The model is named after the file ("llama-3-8b.json" ->
// "llama-3-8b"; "<dir>/config.json" -> "<dir>"). Throws SpecError (kernels/spec_error.hpp)
// naming the file and key: "x.json: key 'num_attention_heads': expected a positive integer, ...".
ModelConfig load_hf_config(const std::string& path);

// Same from text; `origin` is the file name used in messages.
ModelConfig parse_hf_config(std::string_view json_text, const std::string& origin,
                            std::string name);

// The "architectures" values accepted, for messages and docs.
std::vector<std::string> supported_hf_architectures();

}  // namespace ks::kernels
