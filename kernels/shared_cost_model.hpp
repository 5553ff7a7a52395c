#pragma once
// One cost model per distinct pricing, shared by every GPU that prices alike. The GPUs of a run
// mostly price the same kernels on the same spec: 64 GPUs (16 replicas of TP4) with a private
// ~1 MB memo each outgrow the caches, and most lookups then miss to DRAM. Matched by content
// (KernelCostModel::prices_like), so a GPU with any other spec, tier, calibration or time scale
// gets a model of its own; prices never depend on the sharing (the memo holds pure results).
// A shared model's memo is not locked: one simulation runs on one thread (the pool itself is).
#include <memory>

#include "kernels/kernel_cost_model.hpp"

namespace ks::kernels {

// A live model that prices like `model`, else `model` itself, now shared. Only models still held
// by someone are matched: a finished run's models go away with it.
std::shared_ptr<const KernelCostModel> shared_cost_model(KernelCostModel model);

}  // namespace ks::kernels
