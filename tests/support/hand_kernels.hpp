#pragma once
// Test helpers: kernels built by hand for timing tests whose expectations are worked out from
// the FLOPs and bytes alone (bf16, no shape), and SystemC times in microseconds.
#include <systemc>

#include "kernels/kernel.hpp"

namespace ks::test_support {

inline sc_core::sc_time us(double v) { return sc_core::sc_time(v, sc_core::SC_US); }

// A GEMM of `flops` FLOPs and no bytes: compute-bound on any roofline.
inline kernels::Kernel gemm_of_flops(double flops) {
  kernels::Kernel k{};
  k.op = kernels::OpKind::Gemm;
  k.name = "test_kernel";
  k.dtype = kernels::DType::BF16;
  k.flops = flops;
  return k;
}

// An all-reduce of a `bytes`-byte tensor (nccl-tests' size).
inline kernels::Kernel all_reduce_of(double bytes) {
  kernels::Kernel k{};
  k.op = kernels::OpKind::AllReduce;
  k.name = "all_reduce";
  k.dtype = kernels::DType::BF16;
  k.bytes = bytes;
  return k;
}

}  // namespace ks::test_support
