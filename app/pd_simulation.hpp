#pragma once
// Prefill/decode disaggregation in a scenario (the `disaggregation:` section): its schema, what
// it resolves to, and the parts the Simulation holds when it is on (serving/pd_coordinator.hpp,
// hw/gpu/kv_transfer_link.hpp). Kept apart from simulation.cpp, which calls into it at a few
// marked places only.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/config/document.hpp"
#include "base/config/schema.hpp"
#include "hw/gpu/gpu_module.hpp"
#include "hw/gpu/kv_transfer_link.hpp"
#include "hw/host/host_cpu.hpp"
#include "hw/interconnect/interconnect_kind.hpp"
#include "hw/interconnect/topology.hpp"
#include "kernels/dtype.hpp"
#include "kernels/model_config.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/host_overheads.hpp"
#include "serving/memory_plan.hpp"
#include "serving/metrics_recorder.hpp"
#include "serving/pd_coordinator.hpp"
#include "serving/router.hpp"

namespace ks::app {

class ReplicaModule;

config::Schema disaggregation_schema();
config::Schema pd_pool_schema(const char* pool);

// One pool as the scenario gives it.
struct PdPoolPlan {
  std::string name;  // "prefill" / "decode"
  int replicas = 1;
  int tp = 1;
  const hw::GpuRegistry::Entry* gpu_entry = nullptr;
  config::Params gpu_p;
  std::string router_kind;
  const serving::RouterRegistry::Entry* router_entry = nullptr;
  config::Params router_p;
  int first_device = 0;       // global id of its first GPU
  config::SourceMark mark;    // the pool's section, for errors found later
};

struct PdPlan {
  PdPoolPlan prefill, decode;
  serving::KvTransferMode mode = serving::KvTransferMode::Whole;
  std::string placement;  // packed | split_nodes
};

// What a PD simulation holds beyond the Simulation's replica modules (both pools', prefill
// first: prefill<i>, then decode<i>).
struct PdParts {
  PdPlan plan;
  serving::MetricsRecorder prefill_metrics;  // the prefill side's one-token requests (not reported)
  std::unique_ptr<hw::KvTransferLink> link;
  std::unique_ptr<serving::PdCoordinator> coordinator;
  serving::MemoryPlan prefill_memory, decode_memory;
  std::string prefill_gpu, decode_gpu;
};

// What parse_disaggregation reads besides the section (resolved by the Simulation already).
struct PdParseInputs {
  const hw::GpuRegistry::Entry* gpu_entry = nullptr;  // hardware.gpu: the pools' default
  const config::Params* gpu_p = nullptr;
  const config::Params* par_p = nullptr;    // parallel
  const config::Params* cache_p = nullptr;
  const config::Params* topo_p = nullptr;   // hardware.topology
  const kernels::ModelConfig* model = nullptr;
  kernels::DType weight_dtype = kernels::DType::BF16;
  kernels::DType kv_dtype = kernels::DType::BF16;
  const interconnect::Topology* topology = nullptr;
};

// Reads and checks `disaggregation:` (call only when the scenario has it, before
// Document::check_unused). Throws config::ConfigError naming file, line and key.
PdPlan parse_disaggregation(config::Section root, const PdParseInputs& in);

// What Simulation::elaborate_disaggregated builds from.
struct PdElabInputs {
  const hw::InterconnectRegistry::Entry* ic_entry = nullptr;  // null: the built-in fabric
  const config::Params* ic_p = nullptr;
  std::shared_ptr<interconnect::Topology> topology;
  const serving::HostOverheadsRegistry::Entry* host_entry = nullptr;  // the engine's software overheads
  const config::Params* host_p = nullptr;
  const serving::SchedulerRegistry::Entry* sched_entry = nullptr;
  const config::Params* engine_p = nullptr;
  const config::Params* cache_p = nullptr;
  const config::Params* model_p = nullptr;
  const kernels::ModelConfig* model = nullptr;
  kernels::DType weight_dtype = kernels::DType::BF16;
  kernels::DType kv_dtype = kernels::DType::BF16;
};

// What `kernelsight check` prints for a disaggregated scenario: each pool's GPUs, TP, router and
// memory plan, and how the KV moves.
std::string describe_disaggregation(const PdParts& pd, const std::string& model_name);

// Per-pool and KV-transfer figures for summary.json ("disaggregation").
nlohmann::json pd_report(const PdParts& pd, const std::vector<std::unique_ptr<ReplicaModule>>& replicas,
                         double duration_s);

}  // namespace ks::app
