#pragma once
// Spec-sheet description of one GPU: what the roofline (and later the learned efficiency model)
// needs. All quantities in SI base units. Built from data/gpus/*.yaml (kernels/gpu_catalog.hpp).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.hpp"

namespace ks::kernels {

struct GpuSpec {
  std::string name;
  // DENSE peak FLOP/s (OP/s for integers) per dtype: tensor-core rates for 16-bit and narrower,
  // the non-tensor (CUDA core) rate for FP32. A missing entry means the dtype is unsupported.
  std::map<DType, double> peak_flops;
  double hbm_bandwidth = 0;  // B/s
  // Physical device memory. HBM/GDDR capacities marketed as "80 GB" are binary (80 GiB); the
  // driver reserves part of it, which the serving memory model accounts for, not this number.
  double memory_bytes = 0;
  int num_sms = 0;
  double l2_bytes = 0;
  double clock_hz = 0;  // boost clock the vendor's tensor-core peaks are computed at
  // GPU-to-GPU scale-up link (NVLink; Infinity Fabric on AMD) and host link (PCIe), both
  // bidirectional totals per GPU as vendors quote them; 0 = no such link.
  double nvlink_bandwidth = 0;  // B/s
  double pcie_bandwidth = 0;    // B/s
  std::string vendor;           // "nvidia", "amd"
  // Architecture generation ("ampere", "hopper", ...): GPUs of one generation share their kernel
  // libraries' behaviour, so the cross-gen tier leaves a whole generation out. "" = its own.
  std::string generation;
  // How the scale-up link joins a node's GPUs: "switch" (NVSwitch; every GPU reaches every other at
  // nvlink_bandwidth) or "bridge" (NVLink bridges join pairs, the rest goes over PCIe). "" = switch
  // when the GPU has a scale-up link.
  std::string scale_up;
  std::string description;      // "NVIDIA H100 SXM5 80 GB (HBM3)"
  std::string source;           // every citation of the spec file, joined ("; ")
  // Per number: field ("hbm_bandwidth", "peak_bf16", ...) -> the citation it came from, or
  // "override" when a scenario replaced it.
  std::map<std::string, std::string> sources;

  // Throws std::invalid_argument if this GPU has no peak for dtype (e.g. fp8 on A100).
  double peak(DType dtype) const;
  bool supports(DType dtype) const { return peak_flops.count(dtype) != 0; }
  // Every field (a new field belongs here too: shared cost models are matched by it).
  bool operator==(const GpuSpec& o) const;
  bool operator!=(const GpuSpec& o) const { return !(*this == o); }
};

// Whether the GPU's SMs have a bulk asynchronous copy engine (NVIDIA's Tensor Memory Accelerator,
// Hopper and Blackwell): one thread issues a tile's whole copy between global and shared memory,
// so a memory-bound kernel keeps more bytes in flight with fewer threads. Read from the
// generation (a spec file without one has none).
bool bulk_async_copy(const GpuSpec& gpu);

// The shipped catalog (data/gpus/*.yaml, embedded at build time); nullptr if unknown.
// Lookup is ASCII case-insensitive.
const GpuSpec* find_builtin_gpu(std::string_view name);
std::vector<std::string> builtin_gpu_names();

}  // namespace ks::kernels
