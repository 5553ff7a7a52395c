#pragma once
// A replica as a SystemC module, so the sc_object hierarchy names everything it holds:
//
//   replica0                  ReplicaModule
//     stage0 .. stage<pp-1>   StageModule: host, gpu0 .. gpu<tp-1>, tp (tp > 1)
//     pp0to1 ..               hw::PipelineLink between consecutive stages (pp > 1)
//     ks_replica0_engine ..   the engine's processes (serving::Replica: its engine loop, and one
//                             per stage with pp > 1), spawned inside the module
//
// The engine (serving::Replica) is made by a factory the app passes in, called once the stages
// exist (it sizes the KV cache from the stage's GPU) and while this module is being elaborated,
// so its processes are this module's children. Statistics and parameters of the replica and of
// everything in it are registered by hierarchical name (register_in).
#include <functional>
#include <memory>
#include <vector>

#include <systemc>

#include "app/stage_module.hpp"
#include "hw/gpu/pipeline_link.hpp"
#include "serving/replica.hpp"

namespace ks::app {

class ReplicaModule;

// What a replica is built from: each stage as StageBuild says (stage s's rank 0 is device
// first_device + s*tp, as Ray packs vLLM's workers: rank = pp_rank * tp + tp_rank), the links
// between stages on the interconnect, and the engine.
struct ReplicaBuild {
  int pp = 1;
  StageBuild stage;  // first_device: the replica's first GPU
  std::function<std::unique_ptr<serving::Replica>(ReplicaModule&)> make_engine;
};

class ReplicaModule : public sc_core::sc_module {
 public:
  ReplicaModule(const sc_core::sc_module_name& name, const ReplicaBuild& build);

  int pp() const { return static_cast<int>(stages_.size()); }
  int tp() const { return stages_.front()->tp(); }
  StageModule& stage(int s) { return *stages_.at(static_cast<std::size_t>(s)); }
  const StageModule& stage(int s) const { return *stages_.at(static_cast<std::size_t>(s)); }
  // The send from stage s to stage s+1 (pp > 1).
  hw::PipelineLink& link(int s) { return *links_.at(static_cast<std::size_t>(s)); }
  const hw::PipelineLink& link(int s) const { return *links_.at(static_cast<std::size_t>(s)); }
  int num_links() const { return static_cast<int>(links_.size()); }
  serving::Replica& engine() { return *engine_; }
  const serving::Replica& engine() const { return *engine_; }

  // What the engine drives: each stage's host, and the links (the contract's interfaces).
  std::vector<proto::StepExecutor*> stage_executors();
  std::vector<proto::ActivationChannel*> channels();

  // Registers this replica's parameters and statistics and those of every stage and link.
  void register_in(tree::ModuleRegistry& registry) const;

 private:
  std::vector<std::unique_ptr<StageModule>> stages_;
  std::vector<std::unique_ptr<hw::PipelineLink>> links_;
  std::unique_ptr<serving::Replica> engine_;
};

}  // namespace ks::app
