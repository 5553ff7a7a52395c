#pragma once
// A scenario as a typed value: every section resolved through its schema and cross-checked
// (model against parallel split, topology size, engine options, disaggregation, unknown keys), in
// one pure step that builds no SystemC object. app::Simulation elaborates the module tree from it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/pd_simulation.hpp"
#include "base/config/document.hpp"
#include "base/config/schema.hpp"
#include "hw/gpu/gpu_module.hpp"
#include "hw/interconnect/interconnect_kind.hpp"
#include "hw/interconnect/fabric_transfer.hpp"
#include "hw/interconnect/topology.hpp"
#include "kernels/dtype.hpp"
#include "kernels/model_config.hpp"
#include "kernels/step.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/host_overheads.hpp"
#include "serving/router.hpp"
#include "serving/speculative.hpp"
#include "serving/workload.hpp"

namespace ks::app {

struct ScenarioSpec {
  std::string name;
  std::uint64_t seed = 0;
  int replicas = 1;

  // model
  std::shared_ptr<const kernels::ModelConfig> model;  // the preset or the loaded config.json
  config::Params model_p;
  kernels::DType weight_dtype = kernels::DType::BF16;
  kernels::DType kv_dtype = kernels::DType::BF16;

  // hardware: the GPU kind, the split of each replica, the topology and what carries it
  const hw::GpuRegistry::Entry* gpu_entry = nullptr;
  config::Params gpu_p;
  config::Params par_p;  // parallel (for errors found while building)
  kernels::ParallelConfig parallel;
  std::string topology_kind;
  std::shared_ptr<interconnect::Topology> topology;
  config::Params topo_p;
  const hw::InterconnectRegistry::Entry* interconnect_entry = nullptr;  // null: the built-in fabric
  std::optional<config::Params> interconnect_p;
  const serving::HostOverheadsRegistry::Entry* host_entry = nullptr;  // the engine's software overheads
  config::Params host_p;  // with the host's launch keys

  // engine and KV cache
  const serving::SchedulerRegistry::Entry* scheduler_entry = nullptr;
  config::Params engine_p;
  std::int64_t max_model_len = 0;    // vLLM's max_model_len (no limit where the profile has none)
  bool max_model_len_given = false;  // engine.max_model_len set
  std::optional<serving::SpecDecodeConfig> spec_decode;  // engine.speculative
  config::Params cache_p;

  // workload, router, outputs
  const serving::WorkloadRegistry::Entry* workload_entry = nullptr;
  config::Params workload_p;
  config::SourceMark workload_mark;      // for errors found while running
  bool reject_long_requests = false;     // trace workloads: reject; others: a workload error
  std::int64_t expected_requests = 0;    // 0: by duration / whole trace
  const serving::RouterRegistry::Entry* router_entry = nullptr;
  config::Params router_p;
  std::string output_dir;
  double price_per_gpu_hour = 0;

  std::optional<PdPlan> disaggregation;  // `disaggregation:` (app/pd_simulation.hpp)
};

// Resolves and checks the whole scenario (applying its engine profile's defaults first). Throws
// config::ConfigError naming file, line and key; unknown keys are errors once every section is read.
ScenarioSpec read_scenario(config::Document& scenario);

// The topology preset that matches the GPU when the scenario names none.
// The fabric of a scenario that names no topology, from its GPU (hw/interconnect/fabric_transfer.hpp).
interconnect::ScaleUpLinks scale_up_links(const kernels::GpuSpec& gpu);
interconnect::DefaultFabric default_fabric_of(const std::string& gpu_kind, const config::Params& gpu_params);

// The scenario's sections without a `kind:` and their schemas, in file order ("" = top level):
// what `kernelsight describe --all` documents beside the registered kinds.
std::vector<std::pair<std::string, config::Schema>> fixed_scenario_sections();

}  // namespace ks::app
