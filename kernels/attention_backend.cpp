#include "kernels/attention_backend.hpp"

#include <algorithm>

namespace ks::kernels {

const std::vector<std::string>& attention_backend_names() {
  static const std::vector<std::string> names = {"fa2", "fa3", "fa4", "flashinfer", "trtllm", "triton"};
  return names;
}

bool is_attention_backend(const std::string& name) {
  const auto& n = attention_backend_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

std::string attention_backend_of(const std::string& framework, const std::string& src) {
  // AIConfigurator's collector/kernel_source_backends.yaml (commit 0316c86) translates the labels:
  // sglang flash_attention / fa3 -> FlashAttentionBackend (fa3), trtllm_mha -> TRTLLMHAAttnBackend;
  // trtllm torch_flow -> TensorRT-LLM's unified attention backend, torch_flow_flashinfer ->
  // FlashInferAttention; vllm vllm_flash_attn[_faN] -> FLASH_ATTN (FA version appended from 0.24;
  // the A100 table of 0.14 has no suffix and FA3 needs Hopper, so FA2), vllm_flashinfer_* ->
  // FLASHINFER (on Blackwell with flashinfer's trtllm-gen kernels), vllm_triton_attn -> TRITON_ATTN.
  if (framework == "sglang") {
    if (src == "flash_attention" || src == "fa3" || src == "flash_attention_v3") return "fa3";
    if (src == "flash_attention_v4") return "fa4";
    if (src == "trtllm_mha") return "trtllm";
    if (src == "flashinfer" || src == "triton") return src;
    return "";
  }
  if (framework == "trtllm") {
    if (src == "torch_flow") return "trtllm";
    if (src == "torch_flow_flashinfer") return "flashinfer";
    return "";
  }
  if (framework == "pytorch") {  // scripts/microbench/microbench.py's labels
    if (src == "sdpa_flash" || src.rfind("flash_attn2", 0) == 0) return "fa2";  // PyTorch's FA2, flash-attn 2.x
    if (src == "fa3" || src == "fa4") return src;
    return "";  // cuDNN's fused attention, memory-efficient attention: no backend of ours
  }
  if (framework == "vllm") {
    if (src == "vllm_flash_attn" || src == "vllm_flash_attn_fa2") return "fa2";
    if (src == "vllm_flash_attn_fa3") return "fa3";
    if (src == "vllm_flash_attn_fa4") return "fa4";
    if (src.rfind("vllm_flashinfer", 0) == 0) return "flashinfer";
    if (src == "vllm_triton_attn") return "triton";
    return "";
  }
  return "";
}

std::string attention_backend_list() {
  std::string out;
  for (const auto& b : attention_backend_names()) out += (out.empty() ? "" : ", ") + b;
  return out;
}

std::string default_attention_backend(const std::string& engine, const std::string& generation) {
  if (engine == "trtllm") return "trtllm";
  if (engine == "vllm") {
    if (generation == "hopper") return "fa3";
    if (generation == "blackwell") return "flashinfer";
    return "fa2";
  }
  if (engine == "sglang") {
    if (generation == "blackwell") return "trtllm";
    if (generation == "hopper") return "fa3";
    return "flashinfer";
  }
  return "";
}

std::string attention_backend_path(const std::string& path, const std::string& backend) {
  const std::string ext = ".yaml";
  const std::string stem =
      path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0
          ? path.substr(0, path.size() - ext.size())
          : path;
  return stem + ".attention-" + backend + ext;
}

}  // namespace ks::kernels
