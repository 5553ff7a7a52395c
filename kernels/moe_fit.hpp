#pragma once
// Fitting the expert-GEMM correction (moe_correction.hpp) of a fitted kernel model on measured MoE
// layers of one GPU and engine (moe_layer.hpp): the target tier's.
//
// A layer's time is its kernels' times; the model prices all of them, the expert GEMMs as dense
// GEMMs. What the layer took beyond its other kernels (top-k, SwiGLU, weighted sum, as the model
// prices them) is attributed to its two expert GEMMs: log(attributed / priced) is the target of
// boosted trees over MoeGemmCorrection::features, both GEMMs of a layer sharing it. The trees'
// settings are chosen by cross-validation over layer families (hidden, inter, top_k, experts, tp,
// ep, dtype), and the trees are kept only if that cross-validated error beats no correction on the
// same rows: a choice made inside the training data.
//
// Only layers whose experts are split tp ways (ep = 1) are fitted: under expert parallelism the
// collectors run each rank's experts otherwise than the simulator's all-to-all dispatch
// (moe_layer.hpp, moe_layer_class), so those layers measure work the kernels do not describe. Layers whose GEMMs, as attributed, take under a
// quarter of the time are left out (counted in `skipped`): their attribution is mostly the other
// kernels' error.
#include <vector>

#include "kernels/efficiency_model.hpp"
#include "kernels/moe_layer.hpp"

namespace ks::kernels {

// Throws std::invalid_argument for a layer of a GPU not in the catalogue.
MoeGemmCorrection fit_moe_gemm_correction(const EfficiencyModel& model, const std::vector<MoeLayerMeasurement>& layers);

}  // namespace ks::kernels
