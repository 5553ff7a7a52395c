#pragma once
// Fitting the efficiency model (efficiency_model.hpp) to measurements: per kernel class, a
// Levenberg-Marquardt least-squares fit (Eigen) of log predicted vs log measured time, with every
// (GPU, source) group weighted equally and a ridge pull towards a prior model (the defaults, or for
// the target tier the cross-generation model being corrected).
#include <string>
#include <vector>

#include "kernels/efficiency_model.hpp"
#include "kernels/sweep.hpp"

namespace ks::kernels {

struct FitOptions {
  double ridge = 1e-3;              // pull of every parameter towards the prior's
  const EfficiencyModel* prior = nullptr;
  std::size_t min_rows = 8;         // classes with fewer rows keep the prior's parameters
  bool residual_trees = false;      // also learn a boosted-tree residual per class
  // Choose the trees' depth, learning rate and count per class by cross-validation over shape
  // families of the rows being fitted (boost_selection.hpp) instead of using `boost`.
  bool select_residual = false;
  // Keep the sweep's measured shape families (measured_families.hpp) for a class whose
  // left-out-point probe says they predict better than the class model; needs residual_trees.
  bool measured_families = false;
  // Treat every row as the serving engine's own kernels (source flag 0): the target tier's sweep
  // defines the kernels being simulated, whatever measured it.
  bool rows_are_engine_source = false;
  // Elementwise classes fit only a constant memory efficiency and a latency floor. Their
  // size-dependent behaviour does not carry from one GPU to another (measured: leaving one GPU
  // out, the full model is worse than the roofline), so the cross-gen tier keeps them simple.
  bool transferable_elementwise = false;
  // Decode attention fits only its waves-over-SMs and copy-engine memory features, with the
  // SM-side rate fixed at 64 bytes per SM-cycle: what carries to another generation
  // (docs/kernel-model.md, "Attention across generations", "Decode's efficiency across
  // generations"). A GPU's own sweep (the target tier) fits every feature: the restricted
  // form made held-out target decode worse (H200 39.5 -> 47.1%, validate_kernels.sh).
  // It also counts a packed grouped-query group's CTAs per (sequence, KV head) and fits the
  // re-reads of a group too large to pack (ClassParams::ctas_per_kv_head, log_reread_cycles).
  // Without it, decode keeps the form of the prior (`prior`'s decode class): a target fit on a
  // cross-gen prior fits the same terms, every feature free.
  bool transferable_decode = false;
  // Attention's floors (prefill and decode) are a number of cycles, so a GPU with a faster clock
  // has a shorter one (ClassParams::floor_in_cycles). Chosen for the cross-gen tier by leaving
  // each generation out (docs/kernel-model.md, "Floors in cycles"); a target fit keeps its
  // prior's form (at one GPU's clock both forms price alike).
  bool attention_floor_in_cycles = false;
  // Price the rows of sources that replay the kernel (replayed_copies) as measured warm: decode's
  // KV, a GEMM's rotated weights read from the L2 where they fit (KernelFeatures::t_l2) at a rate
  // such rows fit (ClassParams::log_warm_l2_cycles). Both tiers' (docs/kernel-model.md, "Decode's
  // efficiency across generations", "GEMM weights in the collectors' L2", "The target tier reads
  // its tables' replayed rows as warm").
  bool warm_l2_rows = false;
  // Fit the input quantisation of an engine's narrow-dtype GEMMs (KernelFeatures::t_quant,
  // ClassParams::log_quant_bytes) where some row has one; without it the term keeps the prior's
  // value (none in files from before it). Rows of product-only sources (other_source_flag) have
  // none, `rows_are_engine_source` or not: they timed the product on inputs already narrow.
  bool quantisation_term = false;
  // GEMM: price a 16-bit GEMM that splits K as split (ClassParams::split_k_launch): a shorter K
  // loop per CTA and a second launch; else the class keeps the prior's form.
  bool gemm_split_k = false;
  BoostOptions boost;
};

// 1 for sources that are not a serving engine's own kernels (XLA's tables, microbench.py's
// PyTorch sweeps), else 0.
double other_source_flag(const std::string& source);

// How a source's collector replays a kernel it times, with no L2 eviction in between: 0 when it
// does not (the kernel is priced cold); for decode attention 1 (the same KV again:
// AIConfigurator's CUDA graph of the kernel, collector/helper.py, and Vidur's attention call under
// its timer, vidur/profiling/attention/); for a GEMM the copies of its weights AIConfigurator's
// collectors rotate through (collector/<engine>/collect_gemm.py: TensorRT-LLM 5, whose later
// rule min(5, ceil(L2 / weights)) is warm exactly when 5 fit; vLLM 6, 1 for NVFP4; SGLang 6).
int replayed_copies(const std::string& source, const Kernel& kernel);

// Throws std::invalid_argument if a row's GPU is not in the catalog.
EfficiencyModel fit_efficiency(const std::vector<Measurement>& rows, const FitOptions& options = {});

}  // namespace ks::kernels
