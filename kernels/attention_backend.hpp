#pragma once
// Attention backends: which attention kernel library an engine runs (FlashAttention-2/3/4,
// FlashInfer, TensorRT-LLM's own FMHA/XQA kernels, Triton). The engine's measured kernel tables
// (AIConfigurator's `kernel_source` column) name the backend of every attention row; a scenario
// picks one with `hardware.gpu.attention_backend` (default: the engine's own default on that GPU
// generation), and the calibration store prices attention from that backend's calibration
// (`<engine calibration>.attention-<backend>.yaml`) where the GPU x engine has data for it.
#include <string>
#include <vector>

namespace ks::kernels {

// The backends a scenario may name: fa2, fa3, fa4, flashinfer, trtllm, triton.
const std::vector<std::string>& attention_backend_names();
bool is_attention_backend(const std::string& name);
// The names, comma-separated, for error messages ("fa2, fa3, ...").
std::string attention_backend_list();

// The backend of a measured attention row from its engine and kernel source (AIConfigurator's
// labels, as its collector/kernel_source_backends.yaml translates them); "" when unknown.
std::string attention_backend_of(const std::string& framework, const std::string& kernel_source);

// The backend `engine` runs by default on a GPU of `generation` ("" for an unknown engine):
// TensorRT-LLM its own kernels; vLLM FlashAttention (FA2 before Hopper, FA3 on Hopper) and
// FlashInfer on Blackwell; SGLang FA3 on Hopper, TensorRT-LLM's MHA kernels on Blackwell,
// FlashInfer elsewhere.
std::string default_attention_backend(const std::string& engine, const std::string& generation);

// The file holding `backend`'s attention calibration beside an engine calibration file:
// "dir/target_h100_sxm.sglang.yaml" -> "dir/target_h100_sxm.sglang.attention-fa3.yaml".
std::string attention_backend_path(const std::string& calibration_path, const std::string& backend);

}  // namespace ks::kernels
