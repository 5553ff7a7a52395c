#include "app/replica_module.hpp"

#include <stdexcept>
#include <string>

#include "hw/interconnect/fabric_module.hpp"

namespace ks::app {

ReplicaModule::ReplicaModule(const sc_core::sc_module_name& name, const ReplicaBuild& build)
    : sc_core::sc_module(name) {
  for (int s = 0; s < build.pp; ++s) {
    StageBuild stage = build.stage;
    stage.first_device = build.stage.first_device + s * build.stage.tp;
    stages_.push_back(std::make_unique<StageModule>(("stage" + std::to_string(s)).c_str(), stage));
  }
  for (int s = 0; s + 1 < build.pp; ++s) {
    if (build.stage.interconnect == nullptr)
      throw std::logic_error(std::string(this->name()) + ": pp > 1 needs an interconnect");
    const std::vector<int>& src = stages_[s]->devices();
    const std::vector<int>& dst = stages_[s + 1]->devices();
    links_.push_back(std::make_unique<hw::PipelineLink>(
        ("pp" + std::to_string(s) + "to" + std::to_string(s + 1)).c_str(), src, dst));
    if (hw::FabricModule* fabric = build.stage.interconnect->fabric)
      for (std::size_t r = 0; r < src.size(); ++r) fabric->declare_group({src[r], dst[r]});
    build.stage.interconnect->bind(links_.back()->fabric_socket);
  }
  engine_ = build.make_engine(*this);
}

std::vector<proto::StepExecutor*> ReplicaModule::stage_executors() {
  std::vector<proto::StepExecutor*> out;
  for (auto& s : stages_) out.push_back(&s->host());
  return out;
}

std::vector<proto::ActivationChannel*> ReplicaModule::channels() {
  std::vector<proto::ActivationChannel*> out;
  for (auto& l : links_) out.push_back(l.get());
  return out;
}

void ReplicaModule::register_in(tree::ModuleRegistry& registry) const {
  registry.add_parameter(*this, "pp", std::to_string(pp()));
  registry.add_parameter(*this, "tp", std::to_string(tp()));
  const serving::Replica* e = engine_.get();
  registry.add_statistic(*this, "steps", [e] { return static_cast<double>(e->stats().steps); });
  registry.add_statistic(*this, "kernels_launched", [e] { return static_cast<double>(e->stats().kernels); });
  registry.add_statistic(*this, "preemptions", [e] { return static_cast<double>(e->stats().preemptions); });
  registry.add_statistic(*this, "batches", [e] { return static_cast<double>(e->stats().batches); });
  for (const auto& s : stages_) s->register_in(registry);
  for (const auto& l : links_) {
    const hw::PipelineLink* link = l.get();
    // Sends of every phase together, as summary.json's pipeline_* keys count them.
    auto total = [link](auto field) {
      return [link, field] {
        double v = 0;
        for (const auto& [phase, st] : link->stats()) v += field(st);
        return v;
      };
    };
    registry.add_statistic(*link, "sends", total([](const hw::TransferStats& st) { return static_cast<double>(st.transfers); }));
    registry.add_statistic(*link, "send_seconds", total([](const hw::TransferStats& st) { return st.seconds; }));
    registry.add_statistic(*link, "send_bytes", total([](const hw::TransferStats& st) { return st.bytes; }));
  }
}

}  // namespace ks::app
