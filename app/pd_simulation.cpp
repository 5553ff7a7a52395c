// Prefill/decode disaggregation: the `disaggregation:` section read and checked, the two pools
// elaborated (GPUs, TP groups, hosts, replicas, the KV-transfer module on the interconnect, the
// coordinator), their trace tracks and their summary figures. Simulation calls these from a few
// marked places in simulation.cpp.
#include "app/pd_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "app/simulation.hpp"
#include "kernels/step_decomposer.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/metrics.hpp"

namespace ks::app {

config::Schema disaggregation_schema() {
  config::Schema s(
      "Prefill/decode disaggregation: a prefill pool and a decode pool of replicas, each request's KV cache moved "
      "from its prefill GPUs to its decode GPUs over hardware.topology (docs/serving.md). Needs the `prefill` and "
      "`decode` sections (disaggregation.prefill / disaggregation.decode).");
  s.choice("kv_transfer", {"whole", "layerwise"}, std::string("whole"),
           "whole: the KV cache moves after the prefill (vLLM NixlConnector, SGLang, DistServe); layerwise: each "
           "layer's KV is sent as the layer finishes, only the part the prefill could not hide is exposed "
           "(Splitwise, LMCache / Mooncake layer-wise)")
      .choice("placement", {"packed", "split_nodes"}, std::string("packed"),
              "packed: the decode pool's GPUs follow the prefill pool's (same node when they fit: KV over NVLink); "
              "split_nodes: the decode pool starts on the next node (KV over InfiniBand)");
  return s;
}

config::Schema pd_pool_schema(const char* pool) {
  config::Schema s(std::string("The ") + pool +
                   " pool of a disaggregated deployment; optional `gpu:` (as hardware.gpu, default: hardware.gpu) and "
                   "`router:` (a router kind, default round_robin) sections.");
  s.integer("replicas", 1, std::string(pool) + " replicas", 1, 4096)
      .integer("tp", 1, std::string("tensor-parallel GPUs per ") + pool + " replica", 1, 512);
  return s;
}

namespace {

PdPoolPlan parse_pool(const config::Section& dsec, const char* name, const PdParseInputs& in) {
  const config::Section sec = dsec.section(name);
  const config::Params p = sec.resolve(pd_pool_schema(name));
  PdPoolPlan pool;
  pool.name = name;
  pool.mark = sec.mark();
  pool.replicas = static_cast<int>(p.integer("replicas"));
  pool.tp = static_cast<int>(p.integer("tp"));
  const std::string path = sec.path();
  if (sec.has("gpu")) {
    const config::Section gsec = sec.section("gpu");
    pool.gpu_entry = &hw::gpu_registry().get(gsec.kind("catalog"), gsec.mark("kind"), path + ".gpu.kind");
    pool.gpu_p = gsec.resolve(pool.gpu_entry->schema);
  } else {
    pool.gpu_entry = in.gpu_entry;
    pool.gpu_p = *in.gpu_p;
  }
  const config::Section rsec = sec.section("router", false);
  pool.router_kind = rsec.kind("round_robin");
  pool.router_entry = &serving::router_registry().get(pool.router_kind, rsec.mark("kind"), path + ".router.kind");
  pool.router_p = rsec.resolve(pool.router_entry->schema);
  // The model must split over this tp (KV heads, attention heads, FFN).
  kernels::StepBatch probe;
  probe.decode_contexts.push_back(1);
  try {
    kernels::decompose_step(*in.model, probe, in.weight_dtype, in.kv_dtype, {pool.tp, 1});
  } catch (const std::invalid_argument& e) {
    throw config::ConfigError(p.mark("tp"), path + ".tp", e.what());
  }
  return pool;
}

}  // namespace

PdPlan parse_disaggregation(config::Section root, const PdParseInputs& in) {
  const config::Section dsec = root.section("disaggregation");
  const config::Params dp = dsec.resolve(disaggregation_schema());
  const std::string path = dsec.path();
  // What a disaggregated scenario sets per pool, or does not model.
  // (Sections read before this one have their defaults filled in: only a value from the file or
  // --set counts as given.)
  const auto given = [](const config::SourceMark& m) { return m.origin != "<default>"; };
  if (given(root.mark("replicas")))
    throw config::ConfigError(root.mark("replicas"), "replicas",
                              "with disaggregation the replica counts are per pool: set " + path +
                                  ".prefill.replicas and " + path + ".decode.replicas instead");
  if (given(root.section("router", false).mark("kind")))
    throw config::ConfigError(root.mark("router"), "router",
                              "with disaggregation each pool has its router: set " + path + ".prefill.router and " +
                                  path + ".decode.router instead");
  const config::Params& par = *in.par_p;
  if (par.integer("tp") != 1)
    throw config::ConfigError(par.mark("tp"), "parallel.tp",
                              "with disaggregation tensor parallelism is per pool: set " + path + ".prefill.tp and " +
                                  path + ".decode.tp instead");
  if (par.integer("pp") != 1)
    throw config::ConfigError(par.mark("pp"), "parallel.pp",
                              "pipeline parallelism in a disaggregated pool is not modelled; use 1");
  if (par.integer("ep") != 1)
    throw config::ConfigError(par.mark("ep"), "parallel.ep",
                              "expert parallelism in a disaggregated pool is not modelled; use 1");
  const config::Section engine = root.section("engine", false);
  if (engine.has("speculative"))
    throw config::ConfigError(engine.mark("speculative"), "engine.speculative",
                              "speculative decoding with disaggregation is not modelled; remove one of them");
  if (in.cache_p->number("host_kv_bytes") > 0)
    throw config::ConfigError(in.cache_p->mark("host_kv_bytes"), "cache.host_kv_bytes",
                              "a host KV tier with disaggregation is not modelled; use 0B");

  PdPlan plan;
  plan.mode = dp.string("kv_transfer") == "layerwise" ? serving::KvTransferMode::Layerwise
                                                      : serving::KvTransferMode::Whole;
  plan.placement = dp.string("placement");
  plan.prefill = parse_pool(dsec, "prefill", in);
  plan.decode = parse_pool(dsec, "decode", in);
  try {
    serving::kv_rank_shares(*in.model, in.kv_dtype, plan.prefill.tp, plan.decode.tp);
  } catch (const std::invalid_argument& e) {
    throw config::ConfigError(plan.decode.mark, path + ".decode.tp", e.what());
  }

  // Placement: the prefill pool from GPU 0, the decode pool after it (split_nodes: from the next
  // node boundary).
  const interconnect::Topology& topo = *in.topology;
  const int prefill_gpus = plan.prefill.replicas * plan.prefill.tp;
  plan.prefill.first_device = 0;
  int start = prefill_gpus;
  const int per_node = topo.gpus_per_node();
  if (plan.placement == "split_nodes") start = (prefill_gpus + per_node - 1) / per_node * per_node;
  plan.decode.first_device = start;
  const int needed = start + plan.decode.replicas * plan.decode.tp;
  if (needed > topo.num_gpus())
    throw config::ConfigError(given(in.topo_p->mark("nodes")) ? in.topo_p->mark("nodes") : dsec.mark(),
                              "hardware.topology.nodes",
                              "topology '" + topo.name() + "' has " + std::to_string(topo.num_gpus()) + " GPUs (" +
                                  std::to_string(topo.nodes()) + " x " + std::to_string(per_node) +
                                  "), the disaggregated scenario needs " + std::to_string(needed) + " (" +
                                  std::to_string(prefill_gpus) + " prefill GPUs" +
                                  (start > prefill_gpus ? ", the rest of their node" : "") + ", then " +
                                  std::to_string(plan.decode.replicas * plan.decode.tp) + " decode GPUs, placement " +
                                  plan.placement + "); raise nodes");
  return plan;
}

void Simulation::elaborate_disaggregated(PdPlan plan, const PdElabInputs& in) {
  pd_ = std::make_unique<PdParts>();
  PdParts& pd = *pd_;
  pd.plan = std::move(plan);
  interconnect_ = in.ic_entry != nullptr ? in.ic_entry->make({"fabric", in.topology, *in.ic_p})
                                         : hw::make_fabric("fabric", in.topology);
  fabric_ = interconnect_->fabric;
  pd.link = std::make_unique<hw::KvTransferLink>("kv_transfer", in.topology);
  interconnect_->bind(pd.link->fabric_socket);

  std::vector<serving::PdMember> members[2];
  const config::Params& cache_p = *in.cache_p;
  const config::Params& engine_p = *in.engine_p;
  const hw::LaunchPolicy launch = hw::launch_policy(*in.host_p);
  const std::shared_ptr<const serving::HostOverheads> overheads = in.host_entry->make(*in.host_p);  // fitted once
  for (int side = 0; side < 2; ++side) {
    const PdPoolPlan& pool = side == 0 ? pd.plan.prefill : pd.plan.decode;
    serving::MemoryPlan& memory = side == 0 ? pd.prefill_memory : pd.decode_memory;
    for (int i = 0; i < pool.replicas; ++i) {
      // A pool's replica is the same module as one pool's: one stage (host, GPUs, TP group) and
      // its engine; the KV cache is sized once per pool, from its first replica's GPU.
      auto make_engine = [&, i, side](ReplicaModule& replica) {
        const kernels::GpuSpec& gpu = replica.stage(0).gpu(0).spec();
        if (i == 0) {
          serving::MemoryInputs mem;
          mem.gpu_memory_bytes = gpu.memory_bytes;
          mem.gpu_memory_utilization = cache_p.number("gpu_memory_utilization");
          mem.kv_free_memory_fraction = cache_p.number("kv_cache_free_memory_fraction");
          mem.weight_dtype = in.weight_dtype;
          mem.kv_dtype = in.kv_dtype;
          mem.tp = pool.tp;
          mem.block_size = cache_p.integer("block_size");
          mem.max_num_batched_tokens =
              engine_p.has("max_num_batched_tokens") ? engine_p.integer("max_num_batched_tokens") : 8192;
          mem.max_num_seqs = engine_p.has("max_num_seqs") ? engine_p.integer("max_num_seqs") : 256;
          try {
            memory = serving::plan_memory(*in.model, mem);
          } catch (const std::invalid_argument& e) {
            throw config::ConfigError(pool.mark, "disaggregation." + pool.name,
                                      "the " + pool.name + " pool (tp " + std::to_string(pool.tp) + " on " + gpu.name +
                                          "): " + e.what());
          }
          (side == 0 ? pd.prefill_gpu : pd.decode_gpu) = gpu.name;
          if (const kernels::DType gemm = kernels::gemm_compute_dtype(in.weight_dtype); !gpu.supports(gemm))
            throw config::ConfigError(in.model_p->mark("dtype"), "model.dtype",
                                      "GPU '" + gpu.name + "' of the " + pool.name + " pool has no " +
                                          std::string(kernels::dtype_name(gemm)) + " tensor cores");
        }
        auto kv = std::make_unique<serving::KvBlockManager>(memory.kv_blocks, cache_p.integer("block_size"),
                                                           cache_p.flag("enable_prefix_caching"));
        serving::KvBlockManager* kv_ptr = kv.get();
        serving::SchedulerArgs sched_args{engine_p, kv.get()};
        auto scheduler = in.sched_entry->make(sched_args);
        serving::ReplicaSpec spec{replica.basename(), *in.model, in.weight_dtype, in.kv_dtype,
                                  kernels::ParallelConfig{pool.tp, 1}};
        serving::MetricsRecorder& recorder = side == 0 ? pd.prefill_metrics : metrics_;
        auto engine = std::make_unique<serving::Replica>(*env_, spec, replica.stage(0).host(), std::move(kv),
                                                         std::move(scheduler), recorder);
        engine->set_host_overheads(overheads);
        members[side].push_back({engine.get(), kv_ptr, replica.stage(0).devices()});
        return engine;
      };
      ReplicaBuild build;
      build.stage = StageBuild{pool.tp, pool.first_device + i * pool.tp, pool.gpu_entry, &pool.gpu_p, launch,
                               interconnect_.get()};
      build.make_engine = make_engine;
      replicas_.push_back(std::make_unique<ReplicaModule>((pool.name + std::to_string(i)).c_str(), build));
      replicas_.back()->register_in(modules_);
    }
  }
  memory_ = pd.decode_memory;
  gpu_name_ = pd.prefill_gpu == pd.decode_gpu ? pd.prefill_gpu : pd.prefill_gpu + "+" + pd.decode_gpu;
  tp_ = pd.plan.decode.tp;

  serving::PdSettings settings;
  settings.model = *in.model;
  settings.kv_dtype = in.kv_dtype;
  settings.prefill_tp = pd.plan.prefill.tp;
  settings.decode_tp = pd.plan.decode.tp;
  settings.mode = pd.plan.mode;
  settings.decode_max_num_seqs = engine_p.has("max_num_seqs") ? engine_p.integer("max_num_seqs") : 256;
  // Every prefill -> decode GPU pair that will exchange KV is declared to the fabric, so the TP
  // groups whose links the copies share send their collectives through the link timelines too.
  if (fabric_ != nullptr) {
    const auto shares = serving::kv_rank_shares(*in.model, in.kv_dtype, settings.prefill_tp, settings.decode_tp);
    for (const serving::PdMember& p : members[0])
      for (const serving::PdMember& d : members[1])
        for (const serving::KvRankShare& s : shares)
          if (p.devices[static_cast<std::size_t>(s.src_rank)] != d.devices[static_cast<std::size_t>(s.dst_rank)])
            fabric_->declare_group({p.devices[static_cast<std::size_t>(s.src_rank)],
                                    d.devices[static_cast<std::size_t>(s.dst_rank)]});
  }
  pd.coordinator = std::make_unique<serving::PdCoordinator>(
      *env_, std::move(settings), std::move(members[0]), std::move(members[1]),
      pd.plan.prefill.router_entry->make({pd.plan.prefill.router_p}),
      pd.plan.decode.router_entry->make({pd.plan.decode.router_p}), *pd.link, metrics_);
}

void Simulation::enable_disaggregated_trace(util::TraceRecorder* t) {
  PdParts& pd = *pd_;
  for (auto& replica : replicas_) {
    const std::string rname = replica->basename();  // prefill<i> / decode<i>
    StageModule& stage = replica->stage(0);
    stage.host().set_trace(t, t->track(rname, "host (prepare / launch / wait / finish)"));
    replica->engine().set_trace(t, t->track(rname, "requests"));
    for (int r = 0; r < stage.tp(); ++r) {
      const hw::GpuModule& gpu = stage.gpu(r);
      const std::string process = rname + " gpu" + std::to_string(r) + " (device " + std::to_string(gpu.device_id()) + ")";
      stage.gpu_trace(r).attach(t, process);
      t->track(process, "stream 0");
    }
    if (hw::TpGroup* group = stage.tp_group())
      group->set_trace(t, t->track(rname + " TP collectives", "collectives over " + spec_.topology_kind));
  }
  pd.link->set_trace(t, t->track("KV transfers", "prefill -> decode copies over " + spec_.topology_kind));
  if (fabric_) fabric_->set_trace(t, "links of " + spec_.topology_kind);
}

std::string describe_disaggregation(const PdParts& pd, const std::string& model_name) {
  std::ostringstream out;
  out << "model:    " << model_name << "\n";
  for (int side = 0; side < 2; ++side) {
    const PdPoolPlan& pool = side == 0 ? pd.plan.prefill : pd.plan.decode;
    const serving::MemoryPlan& m = side == 0 ? pd.prefill_memory : pd.decode_memory;
    const int gpus = pool.replicas * pool.tp;
    out << pool.name << (side == 0 ? ":  " : ":   ") << pool.replicas << (pool.replicas == 1 ? " replica" : " replicas")
        << " x tp " << pool.tp << " on " << (side == 0 ? pd.prefill_gpu : pd.decode_gpu) << " (GPUs "
        << pool.first_device << "-" << pool.first_device + gpus - 1 << "), router " << pool.router_kind
        << "; per GPU: weights " << serving::describe_bytes(m.weight_bytes) << ", KV cache "
        << serving::describe_bytes(m.kv_bytes) << " (" << static_cast<long long>(m.kv_bytes_per_token)
        << " B per token), " << m.kv_blocks << " KV blocks = " << m.kv_tokens << " tokens per replica\n";
  }
  out << "KV transfer: " << (pd.plan.mode == serving::KvTransferMode::Layerwise ? "layerwise" : "whole")
      << ", placement " << pd.plan.placement << ", " << pd.coordinator->shares().size()
      << " rank-to-rank copies per request\n";
  return out.str();
}

namespace {

double mean(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += x;
  return xs.empty() ? 0.0 : s / static_cast<double>(xs.size());
}

}  // namespace

nlohmann::json pd_report(const PdParts& pd, const std::vector<std::unique_ptr<ReplicaModule>>& replicas,
                         double duration_s) {
  nlohmann::json out;
  const std::size_t num_prefill = static_cast<std::size_t>(pd.plan.prefill.replicas);
  for (int side = 0; side < 2; ++side) {
    const PdPoolPlan& pool = side == 0 ? pd.plan.prefill : pd.plan.decode;
    const serving::MemoryPlan& memory = side == 0 ? pd.prefill_memory : pd.decode_memory;
    const std::size_t begin = side == 0 ? 0 : num_prefill, end = side == 0 ? num_prefill : replicas.size();
    std::uint64_t steps = 0, kernels = 0, batches = 0, sequences = 0, preemptions = 0;
    double kv_seconds = 0, kv_span = 0, kv_peak = 0, busy = 0;
    std::size_t num_gpus = 0;
    for (std::size_t k = begin; k < end; ++k) {
      const serving::ReplicaStats& st = replicas[k]->engine().stats();
      steps += st.steps;
      kernels += st.kernels;
      batches += st.batches;
      sequences += st.batched_sequences;
      preemptions += st.preemptions;
      kv_seconds += st.kv_usage_seconds;
      kv_span += st.kv_last_s;
      kv_peak = std::max(kv_peak, st.kv_usage_peak);
      const StageModule& stage = replicas[k]->stage(0);
      for (int r = 0; r < stage.tp(); ++r) {
        busy += stage.gpu(r).busy_seconds();
        ++num_gpus;
      }
    }
    nlohmann::json p;
    p["replicas"] = pool.replicas;
    p["tensor_parallel"] = pool.tp;
    p["gpu"] = side == 0 ? pd.prefill_gpu : pd.decode_gpu;
    p["gpus"] = num_gpus;
    p["first_device"] = pool.first_device;
    p["router"] = pool.router_kind;
    p["engine_steps"] = steps;
    p["kernels_launched"] = kernels;
    p["preemptions"] = preemptions;
    p["gpu_utilization"] = duration_s > 0 && num_gpus > 0 ? busy / (duration_s * static_cast<double>(num_gpus)) : 0.0;
    p["mean_batch_size"] = batches > 0 ? static_cast<double>(sequences) / static_cast<double>(batches) : 0.0;
    p["mean_kv_cache_usage"] = kv_span > 0 ? kv_seconds / kv_span : 0.0;
    p["peak_kv_cache_usage"] = kv_peak;
    p["kv_cache_blocks_per_replica"] = memory.kv_blocks;
    p["kv_cache_tokens_per_replica"] = memory.kv_tokens;
    out[pool.name] = p;
  }
  const serving::PdTransferStats& s = pd.coordinator->stats();
  nlohmann::json t;
  t["mode"] = pd.plan.mode == serving::KvTransferMode::Layerwise ? "layerwise" : "whole";
  t["placement"] = pd.plan.placement;
  t["transfers"] = s.transfers;
  t["rank_copies"] = s.copies;
  t["bytes"] = s.bytes;
  t["bytes_after_prefill"] = s.sent_bytes;
  t["bytes_streamed_during_prefill"] = s.bytes - s.sent_bytes;
  t["mean_transfer_ms"] = mean(s.transfer_s) * 1e3;
  t["p99_transfer_ms"] = serving::percentile(s.transfer_s, 99) * 1e3;
  t["mean_exposed_ms"] = mean(s.exposed_s) * 1e3;
  t["p99_exposed_ms"] = serving::percentile(s.exposed_s, 99) * 1e3;
  t["mean_decode_wait_ms"] = mean(s.wait_s) * 1e3;
  t["transfers_that_waited_for_decode_room"] = s.waited;
  nlohmann::json shares = nlohmann::json::array();
  for (const serving::KvRankShare& sh : pd.coordinator->shares())
    shares.push_back({{"prefill_rank", sh.src_rank}, {"decode_rank", sh.dst_rank}, {"bytes_per_token", sh.bytes_per_token}});
  t["rank_shares"] = shares;
  out["kv_transfer"] = t;
  return out;
}

}  // namespace ks::app
