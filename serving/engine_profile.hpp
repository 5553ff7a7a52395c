#pragma once
// Engine profiles: the defaults that differ between serving engines (host overheads, scheduler
// and its limits), bundled under one name. A scenario picks one with `profile: vllm|sglang|trtllm`;
// every value the scenario (or --set) gives itself wins over the profile's.
#include <string>
#include <utility>
#include <vector>

#include "base/config/document.hpp"

namespace ks::serving {

struct EngineProfile {
  std::string name;
  std::string doc;
  std::vector<std::pair<std::string, std::string>> defaults;  // key path -> YAML value
  // Whether the engine caps a request's prompt + output at the model's max_position_embeddings
  // when no engine.max_model_len is given (vLLM, SGLang). TensorRT-LLM's limit is the engine's
  // max_seq_len, which trtllm-bench builds from the dataset's lengths: no cap by default.
  bool caps_at_model_context = true;
};

// The profile's caps_at_model_context; true for "none" or an unknown name.
bool profile_caps_at_model_context(const std::string& profile);

const std::vector<EngineProfile>& engine_profiles();

// Reads the scenario's top-level `profile` (absent or "none": nothing to do) and fills in the
// profile's values where the scenario has none. Host values apply only to the profile's host kind
// (`hardware.host.kind` in its defaults, else fixed_overhead): a scenario without a host section
// gets that kind. Engine values apply only to the profile's scheduler kind. ConfigError for an
// unknown name.
void apply_engine_profile(config::Document& scenario);

}  // namespace ks::serving
