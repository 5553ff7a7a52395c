// The module tree of a run (app/replica_module.hpp, app/stage_module.hpp): every module is named
// by the sc_object hierarchy, and the statistics registered on each module, found by hierarchical
// name, add up to the totals summary.json reports. Placement (device ids) and the one-step time
// of a replica built alone are worked out by hand.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "app/replica_module.hpp"
#include "app/simulation.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/model_config.hpp"
#include "kernels/roofline.hpp"
#include "kernels/step_decomposer.hpp"
#include "serving/batch_scheduler.hpp"
#include "serving/kv_cache.hpp"
#include "serving/metrics_recorder.hpp"
#include "serving/request.hpp"
#include "tests/support/schema_params.hpp"
#include "tests/support/step_time.hpp"

using namespace ks;

namespace {

// Two replicas of TP 2 x PP 2 on one 8-GPU node, busy enough that every module does work.
const char* kScenario = R"(
name: tree
replicas: 2
model: {name: llama-3-8b, dtype: bf16}
parallel: {tp: 2, pp: 2}
hardware:
  gpu: {kind: catalog, spec: a100_sxm_80gb, tier: roofline}
  topology: {kind: dgx_a100}
engine: {kind: vllm_v1, max_num_seqs: 64, max_num_batched_tokens: 2048}
workload: {kind: poisson, rate: 20/s, num_requests: 12, prompt_tokens: 300, output_tokens: 6}
)";

bool exists(const std::string& name) { return sc_core::sc_find_object(name.c_str()) != nullptr; }

double stat(const app::Simulation& sim, const std::string& path) {
  const auto v = sim.modules().statistic(path);
  EXPECT_TRUE(v.has_value()) << "no statistic " << path;
  return v.value_or(-1);
}

}  // namespace

TEST(ModuleTree, TwoReplicasOfTp2Pp2AreNamedByTheHierarchy) {
  config::Document doc = config::Document::parse(kScenario, "tree.yaml");
  app::Simulation sim(doc);
  for (const std::string r : {"replica0", "replica1"}) {
    EXPECT_TRUE(exists(r)) << r;
    for (const std::string s : {"stage0", "stage1"}) {
      for (const std::string child : {"", ".host", ".gpu0", ".gpu1", ".tp"})
        EXPECT_TRUE(exists(r + "." + s + child)) << r + "." + s + child;
      EXPECT_FALSE(exists(r + "." + s + ".gpu2"));
    }
    EXPECT_TRUE(exists(r + ".pp0to1"));
    EXPECT_FALSE(exists(r + ".stage2"));
  }
  EXPECT_FALSE(exists("replica0_gpu0"));  // the flat names of before are gone
  EXPECT_FALSE(exists("replica2"));

  // The engine's processes (engine loop, one per stage) are the replica's children.
  int engine_processes = 0;
  for (const sc_core::sc_object* child : sc_core::sc_find_object("replica1")->get_child_objects())
    if (std::string(child->kind()) == "sc_thread_process" && std::string(child->basename()).find("replica1_") != std::string::npos)
      ++engine_processes;
  EXPECT_EQ(engine_processes, 1 + 2);

  // Rank r of stage s of replica i is device (i*pp + s)*tp + r.
  EXPECT_EQ(sim.modules().parameter("replica0.stage0.gpu0.device_id"), "0");
  EXPECT_EQ(sim.modules().parameter("replica0.stage1.gpu1.device_id"), "3");
  EXPECT_EQ(sim.modules().parameter("replica1.stage0.gpu0.device_id"), "4");
  EXPECT_EQ(sim.modules().parameter("replica1.stage1.gpu1.device_id"), "7");
  EXPECT_EQ(sim.modules().parameter("replica1.stage1.gpu1.spec"), "a100_sxm_80gb");
  EXPECT_EQ(sim.modules().parameter("replica1.pp"), "2");
  EXPECT_EQ(sim.modules().parameter("replica1.stage0.tp"), "2");
  EXPECT_FALSE(sim.modules().parameter("replica1.stage0.gpu0.nothing").has_value());
}

TEST(ModuleTree, PerModuleStatisticsFoundByNameSumToTheReportedTotals) {
  config::Document doc = config::Document::parse(kScenario, "tree.yaml");
  app::Simulation sim(doc);
  sim.run();
  const nlohmann::json report = sim.report();
  ASSERT_EQ(sim.summary().completed, 12);

  double steps = 0, kernels = 0, whole = 0, collectives = 0, comm_s = 0, sends = 0, send_s = 0, busy = 0;
  for (const std::string r : {"replica0", "replica1"}) {
    EXPECT_GT(stat(sim, r + ".steps"), 0) << r << " got no requests";
    steps += stat(sim, r + ".steps");
    kernels += stat(sim, r + ".kernels_launched");
    for (const std::string s : {".stage0", ".stage1"}) {
      // Every stage's host runs every step of its replica.
      EXPECT_EQ(stat(sim, r + s + ".host.steps"), stat(sim, r + ".steps"));
      whole += stat(sim, r + s + ".host.whole_step_launches");
      collectives += stat(sim, r + s + ".tp.collectives");
      comm_s += stat(sim, r + s + ".tp.collective_seconds");
      for (const std::string g : {".gpu0", ".gpu1"}) {
        EXPECT_GT(stat(sim, r + s + g + ".busy_seconds"), 0) << r + s + g;
        busy += stat(sim, r + s + g + ".busy_seconds");
      }
    }
    sends += stat(sim, r + ".pp0to1.sends");
    send_s += stat(sim, r + ".pp0to1.send_seconds");
  }
  EXPECT_EQ(steps, report["engine_steps"].get<double>());
  EXPECT_EQ(kernels, report["kernels_launched"].get<double>());
  EXPECT_EQ(whole, report["whole_step_launches"].get<double>());
  EXPECT_GT(collectives, 0);
  EXPECT_EQ(collectives, report["collectives"].get<double>());
  EXPECT_NEAR(comm_s, report["collective_seconds"].get<double>(), 1e-12);
  EXPECT_EQ(sends, report["pipeline_sends"].get<double>());
  EXPECT_NEAR(send_s, report["pipeline_send_seconds"].get<double>(), 1e-12);
  EXPECT_NEAR(busy / (8 * sim.summary().duration_s), report["gpu_utilization"].get<double>(), 1e-12);
  // The registry's own sums agree with the names read one by one ("steps": replicas and hosts).
  EXPECT_EQ(sim.modules().sum("", "steps"), steps + [&] {
    double host_steps = 0;
    for (const std::string p : {"replica0.stage0", "replica0.stage1", "replica1.stage0", "replica1.stage1"})
      host_steps += stat(sim, p + ".host.steps");
    return host_steps;
  }());
  EXPECT_NEAR(sim.modules().sum("replica1", "busy_seconds"),
              stat(sim, "replica1.stage0.gpu0.busy_seconds") + stat(sim, "replica1.stage0.gpu1.busy_seconds") +
                  stat(sim, "replica1.stage1.gpu0.busy_seconds") + stat(sim, "replica1.stage1.gpu1.busy_seconds"),
              1e-12);
}

// A ReplicaModule built alone (no Simulation, no scenario): one stage on one catalog GPU placed at
// device 3, its engine made by the factory. A request of 1000 prompt tokens and one output token
// is one prefill step: its kernels launched 5 us apart, each priced by the roofline.
TEST(ModuleTree, AReplicaModuleAloneRunsAPrefillInTheHandComputedTime) {
  sim::Environment env;
  const kernels::ModelConfig* model = kernels::find_builtin_model("llama-3-8b");
  const kernels::GpuSpec* a100 = kernels::find_builtin_gpu("a100_sxm_80gb");
  ASSERT_NE(model, nullptr);
  ASSERT_NE(a100, nullptr);
  const auto& gpu_entry = hw::gpu_registry().get("catalog", {}, "gpu");
  const config::Params gpu_p =
      test_support::resolve_params("spec: a100_sxm_80gb\ntier: roofline\nkernel_overhead: 2us\n", gpu_entry.schema);
  const auto& sched_entry = serving::scheduler_registry().get("vllm_v1", {}, "engine");
  const config::Params engine_p = test_support::resolve_params("max_num_batched_tokens: 2048\n", sched_entry.schema);
  serving::MetricsRecorder metrics;

  app::ReplicaBuild build;
  hw::LaunchPolicy launch;
  launch.per_kernel_s = 5e-6;
  build.stage = app::StageBuild{1, 3, &gpu_entry, &gpu_p, launch, nullptr};
  build.make_engine = [&](app::ReplicaModule& replica) {
    auto kv = std::make_unique<serving::KvBlockManager>(1000, 16);
    auto scheduler = sched_entry.make({engine_p, kv.get()});
    serving::ReplicaSpec spec{replica.basename(), *model, kernels::DType::BF16, kernels::DType::BF16, {1, 1}};
    return std::make_unique<serving::Replica>(env, spec, replica.stage(0).host(), std::move(kv), std::move(scheduler),
                                              metrics);
  };
  app::ReplicaModule replica("alone", build);
  tree::ModuleRegistry registry;
  replica.register_in(registry);
  EXPECT_TRUE(exists("alone.stage0.host"));
  EXPECT_TRUE(exists("alone.stage0.gpu0"));
  EXPECT_FALSE(exists("alone.stage0.tp"));  // tp = 1: the host drives its GPU directly
  EXPECT_EQ(replica.stage(0).gpu(0).device_id(), 3);

  serving::Request r;
  r.prompt_tokens = 1000;
  r.output_tokens = 1;
  env.process([&] { replica.engine().submit(&r); }, "source");
  env.run();

  kernels::StepBatch prefill;
  prefill.prefills = {{1000, 0, true}};
  const kernels::StepKernels step = kernels::decompose_step(*model, prefill, kernels::DType::BF16, kernels::DType::BF16);
  const double expected = test_support::async_step_time(step, 0, 5e-6, 0, [&](const kernels::Kernel& k) {
                            return kernels::roofline_cost(k, *a100, 2e-6).seconds;
                          }).seconds;
  ASSERT_TRUE(r.finished());
  EXPECT_NEAR(r.finish_s, expected, 1e-9);
  EXPECT_EQ(registry.statistic("alone.steps"), 1.0);
  EXPECT_EQ(registry.statistic("alone.stage0.host.steps"), 1.0);
  EXPECT_GT(registry.statistic("alone.stage0.gpu0.busy_seconds").value_or(0), 0.0);
}
