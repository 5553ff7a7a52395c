#pragma once
// Where a GPU reports the kernels it ran for the run's timeline (`--trace`): one KernelSpan per
// finished kernel launch. The app hands a sink to every GPU (hw::GpuArgs::trace for a plug-in,
// set_trace_sink for a GpuModule) and records nothing unless tracing is on (recording()), so a
// GPU asks before it builds a span. A GPU that keeps its own clock (an SC_THREAD serving a queue)
// reports each kernel when it finishes; start and finish are absolute simulated times.
#include <cstdint>

#include <systemc>

#include "kernels/kernel.hpp"
#include "kernels/kernel_cost.hpp"

namespace ks::proto {

struct KernelSpan {
  kernels::Kernel kernel{};
  kernels::KernelCost cost{};   // of one repeat
  int stream = 0;
  int layer = -1;               // -1: not a transformer layer
  int repeat = 1;
  std::uint64_t step = 0;       // engine step id (KernelLaunch::step)
  sc_core::sc_time start;       // first repeat's start
  sc_core::sc_time finish;      // last repeat's finish
};

class KernelTraceSink {
 public:
  virtual ~KernelTraceSink() = default;
  // Whether spans are recorded now (false: the GPU may skip building them).
  virtual bool recording() const = 0;
  virtual void kernel(const KernelSpan& span) = 0;
};

}  // namespace ks::proto
