#include "app/kernel_trace_writer.hpp"

#include <cstdio>

namespace ks::app {

void KernelTraceWriter::attach(util::TraceRecorder* trace, std::string process) {
  trace_ = trace;
  process_ = std::move(process);
  tracks_.clear();
}

void KernelTraceWriter::kernel(const proto::KernelSpan& k) {
  if (trace_ == nullptr || k.stream < 0) return;
  if (static_cast<std::size_t>(k.stream) >= tracks_.size()) tracks_.resize(static_cast<std::size_t>(k.stream) + 1, -1);
  int& track = tracks_[static_cast<std::size_t>(k.stream)];
  if (track < 0) track = trace_->track(process_, "stream " + std::to_string(k.stream));
  std::string args;  // what a performance engineer asks of one kernel; built only when shown
  if (trace_->detailed(k.step)) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{\"step\":%llu,\"layer\":%d,\"repeat\":%d,\"flops\":%.6e,\"bytes\":%.6e,\"bound\":\"%s\","
                  "\"efficiency\":%.4f}",
                  static_cast<unsigned long long>(k.step), k.layer, k.repeat, k.kernel.flops, k.kernel.bytes,
                  std::string(kernels::bound_name(k.cost.bound)).c_str(), k.cost.efficiency);
    args = buf;
  }
  // sc_time values are picoseconds (sim::setup_kernel fixes the resolution).
  trace_->kernel(track, k.step, k.kernel.name, kernels::phase_name(k.kernel.phase), k.start.value(), k.finish.value(),
                 args);
}

}  // namespace ks::app
