#pragma once
// One pipeline stage of a replica as a SystemC module (pp = 1: the replica's only stage). Its
// children are named by the sc_object hierarchy: `host` (the stage's worker: a StepExecutor with
// the launch costs and CUDA graphs), `gpu<r>` for each of its tp ranks (any registered GPU kind),
// and with tp > 1 `tp`, the TP group that drives the ranks and sends collectives to the
// interconnect. Each GPU reports its kernels to a statistics table and a trace writer this stage
// owns (the app's sinks: a plug-in GPU gets them in hw::GpuArgs).
#include <memory>
#include <vector>

#include <systemc>

#include "base/config/schema.hpp"
#include "hw/gpu/gpu_module.hpp"
#include "hw/gpu/tp_group.hpp"
#include "hw/host/host_cpu.hpp"
#include "hw/host/launch_policy.hpp"
#include "hw/interconnect/interconnect_kind.hpp"
#include "app/kernel_trace_writer.hpp"
#include "proto/kernel_stats.hpp"
#include "sc_modules/tree/module_registry.hpp"

namespace ks::app {

// What a stage is built from.
struct StageBuild {
  int tp = 1;
  int first_device = 0;  // global id of rank 0; rank r is first_device + r
  const hw::GpuRegistry::Entry* gpu_entry = nullptr;
  const config::Params* gpu_p = nullptr;
  hw::LaunchPolicy launch;
  hw::InterconnectParts* interconnect = nullptr;  // needed when tp > 1 (the TP group's collectives)
};

class StageModule : public sc_core::sc_module {
 public:
  StageModule(const sc_core::sc_module_name& name, const StageBuild& build);

  hw::HostCpu& host() { return *host_; }
  const hw::HostCpu& host() const { return *host_; }
  int tp() const { return static_cast<int>(gpus_.size()); }
  hw::GpuModule& gpu(int rank) { return *gpus_.at(static_cast<std::size_t>(rank)); }
  const hw::GpuModule& gpu(int rank) const { return *gpus_.at(static_cast<std::size_t>(rank)); }
  // What rank `rank` reported (kernels.csv, GPU time).
  const proto::KernelStatsTable& gpu_stats(int rank) const { return *stats_.at(static_cast<std::size_t>(rank)); }
  // Where rank `rank` puts its kernels on the timeline (attach it to record them).
  KernelTraceWriter& gpu_trace(int rank) { return *traces_.at(static_cast<std::size_t>(rank)); }
  hw::TpGroup* tp_group() { return tp_group_.get(); }  // null with tp = 1
  const hw::TpGroup* tp_group() const { return tp_group_.get(); }
  const std::vector<int>& devices() const { return devices_; }

  // The statistics and parameters of this stage's children, under their hierarchical names.
  void register_in(tree::ModuleRegistry& registry) const;

 private:
  // The tables outlive the GPUs that report to them (members are destroyed in reverse order).
  std::vector<std::unique_ptr<proto::KernelStatsTable>> stats_;
  std::vector<std::unique_ptr<KernelTraceWriter>> traces_;
  std::unique_ptr<hw::HostCpu> host_;
  std::vector<std::unique_ptr<hw::GpuModule>> gpus_;
  std::unique_ptr<hw::TpGroup> tp_group_;
  std::vector<int> devices_;
};

}  // namespace ks::app
