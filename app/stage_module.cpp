#include "app/stage_module.hpp"

#include "hw/interconnect/fabric_module.hpp"

#include <stdexcept>
#include <string>

namespace ks::app {

// Created in the order the flat elaboration used (host, ranks, TP group), so SystemC's process
// order, and with it every output, stays as it was.
StageModule::StageModule(const sc_core::sc_module_name& name, const StageBuild& build) : sc_core::sc_module(name) {
  host_ = std::make_unique<hw::HostCpu>("host", build.launch);
  std::vector<hw::GpuModule*> ranks;
  for (int r = 0; r < build.tp; ++r) {
    stats_.push_back(std::make_unique<proto::KernelStatsTable>());
    proto::KernelStatsTable& stats = *stats_.back();
    traces_.push_back(std::make_unique<KernelTraceWriter>());
    KernelTraceWriter& trace = *traces_.back();
    gpus_.push_back(
        build.gpu_entry->make({"gpu" + std::to_string(r), build.first_device + r, *build.gpu_p, &stats, &trace}));
    gpus_.back()->set_stats_sink(stats);
    gpus_.back()->set_trace_sink(&trace);
    ranks.push_back(gpus_.back().get());
    devices_.push_back(build.first_device + r);
  }
  if (build.tp == 1) {  // the host drives its GPU directly
    host_->gpu_socket.bind(ranks.front()->socket);
    return;
  }
  if (build.interconnect == nullptr) throw std::logic_error(std::string(this->name()) + ": tp > 1 needs an interconnect");
  tp_group_ = std::make_unique<hw::TpGroup>("tp", ranks);
  // Its links may be its own (step launches): the built-in fabric is told which GPUs form it.
  if (build.interconnect->fabric != nullptr) build.interconnect->fabric->declare_group(tp_group_->device_ids());
  build.interconnect->bind(tp_group_->fabric_socket);
  host_->gpu_socket.bind(tp_group_->socket);
}

void StageModule::register_in(tree::ModuleRegistry& registry) const {
  registry.add_parameter(*this, "tp", std::to_string(tp()));
  registry.add_statistic(*host_, "steps", [h = host_.get()] { return static_cast<double>(h->steps()); });
  registry.add_statistic(*host_, "whole_step_launches",
                         [h = host_.get()] { return static_cast<double>(h->whole_step_launches()); });
  for (int r = 0; r < tp(); ++r) {
    const hw::GpuModule& g = gpu(r);
    const proto::KernelStatsTable* t = &gpu_stats(r);
    registry.add_parameter(g, "device_id", std::to_string(g.device_id()));
    registry.add_parameter(g, "spec", g.spec().name);
    registry.add_statistic(g, "busy_seconds", [t] { return t->busy_seconds(); });
    registry.add_statistic(g, "kernel_launches", [t] { return static_cast<double>(t->launches()); });
  }
  if (const hw::TpGroup* group = tp_group_.get()) {
    registry.add_statistic(*group, "collectives", [group] { return static_cast<double>(group->collectives()); });
    registry.add_statistic(*group, "collective_seconds", [group] { return group->comm_seconds(); });
    registry.add_statistic(*group, "exposed_collective_seconds", [group] { return group->exposed_comm_seconds(); });
  }
}

}  // namespace ks::app
