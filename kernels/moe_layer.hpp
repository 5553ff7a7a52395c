#pragma once
// Measured mixture-of-experts layers: one rank's routed experts timed whole, as AIConfigurator's
// collectors time an engine's fused MoE (top-k over given router logits, the grouped gate/up GEMM,
// the activation, the grouped down GEMM, the weighted sum), with balanced routing.
//
//   gpu,source,dtype,tokens,hidden,inter,top_k,experts,tp,ep,time_us[,framework,version,kernel_source]
//
// tokens   tokens the rank's MoE layer takes in (every token's router logits are given)
// hidden   model width; inter the full width of one expert's MLP (split tp ways)
// experts  routed experts of the model (ep ways over the ranks); top_k experts per token
// dtype    the experts' GEMM dtype (bf16, or fp8 with per-tensor scales)
//
// A row is one measurement of several kernels, not of one: no kernel class is fitted on it. It
// checks what the simulator prices for the layer (moe_layer_kernels: the step decomposer's own
// kernels) against what the engine ran, and a target calibration learns its expert-GEMM
// correction from such rows (moe_fit.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dtype.hpp"
#include "kernels/kernel.hpp"

namespace ks::kernels {

struct MoeLayerShape {
  DType dtype = DType::BF16;
  std::int64_t tokens = 0, hidden = 0, inter = 0;
  int top_k = 0, experts = 0, tp = 1, ep = 1;
};

struct MoeLayerMeasurement {
  std::string gpu, source, framework, version, kernel_source;
  MoeLayerShape shape;
  std::vector<Kernel> kernels;  // moe_layer_kernels(shape)
  double seconds = 0;           // measured time of the whole layer
};

// The kernels kernels::decompose_step prices for the layer's routed experts on one rank (no router
// GEMM: the logits are given; no all-to-all: one GPU). Throws std::invalid_argument naming the
// field for a shape it cannot price (inter not divisible by tp, top_k above experts, ...).
std::vector<Kernel> moe_layer_kernels(const MoeLayerShape& shape);

// Throws CsvError naming the file, line and column of a malformed row.
std::vector<MoeLayerMeasurement> read_moe_layers(const std::string& path);
std::vector<MoeLayerMeasurement> parse_moe_layers(const std::string& text, const std::string& origin);

// A layer's shape without its token count ("hidden inter top_k experts tp ep dtype"), and which of
// `folds` folds it falls in (FNV-1a of the family, as kernels::family_fold): validation holds out
// whole families.
std::string moe_layer_family(const MoeLayerShape& shape);
std::size_t moe_layer_fold(const MoeLayerShape& shape, std::size_t folds);

// The class a validation report files the layer under: "moe bf16", "moe fp8" with the experts split
// tp ways (every rank runs every expert), "moe-ep bf16", ... with them spread over ep > 1 ranks. The
// collectors run each rank's experts their own way (TensorRT-LLM's and vLLM's on every token, the
// kernel skipping the other ranks' experts; SGLang's on the rank's tokens in DeepEP's masked
// per-expert buffers), where the simulator's expert parallelism dispatches only the rank's rows
// (all-to-all): the rows through the grouped GEMMs agree, the work around them does not.
std::string moe_layer_class(const MoeLayerShape& shape);

}  // namespace ks::kernels
