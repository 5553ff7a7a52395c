#pragma once
// A GPU's kernels on the run's timeline: the proto::KernelTraceSink the app hands each GPU (built-in
// or plug-in alike). Nothing is recorded until attach() (`--trace`); then each stream of the GPU
// is a track of the GPU's process ("replica0 stage1 gpu0 (device 2)"), its kernels spans on it,
// with their FLOPs, bytes and bound for the steps traced in detail.
#include <string>
#include <vector>

#include "base/util/trace_recorder.hpp"
#include "proto/kernel_trace.hpp"

namespace ks::app {

class KernelTraceWriter final : public proto::KernelTraceSink {
 public:
  void attach(util::TraceRecorder* trace, std::string process);
  bool recording() const override { return trace_ != nullptr; }
  void kernel(const proto::KernelSpan& span) override;

 private:
  util::TraceRecorder* trace_ = nullptr;
  std::string process_;
  std::vector<int> tracks_;  // per stream; -1: not created yet
};

}  // namespace ks::app
