// read_scenario (app/scenario_spec.hpp): a scenario becomes a typed, cross-checked value without
// building any SystemC object, and a Simulation elaborates exactly what the value says.
#include <gtest/gtest.h>

#include <string>

#include <systemc>

#include "app/scenario_spec.hpp"
#include "app/simulation.hpp"
#include "base/config/error.hpp"

using namespace ks;

namespace {

const char* kScenario = R"(
name: spec
replicas: 2
model: {name: llama-3-8b, dtype: bf16}
parallel: {tp: 2, pp: 2}
hardware:
  gpu: {kind: catalog, spec: a100_sxm_80gb, tier: roofline}
  topology: {kind: dgx_a100}
engine: {kind: vllm_v1, max_num_seqs: 64}
workload: {kind: poisson, rate: 20/s, num_requests: 12, prompt_tokens: 300, output_tokens: 6}
)";

std::size_t systemc_objects() { return sc_core::sc_get_top_level_objects().size(); }

}  // namespace

TEST(ScenarioSpec, ReadsEverySectionIntoTypedValuesAndBuildsNoModule) {
  config::Document doc = config::Document::parse(kScenario, "spec.yaml");
  const std::size_t before = systemc_objects();
  const app::ScenarioSpec spec = app::read_scenario(doc);
  EXPECT_EQ(systemc_objects(), before);
  EXPECT_EQ(spec.name, "spec");
  EXPECT_EQ(spec.replicas, 2);
  EXPECT_EQ(spec.parallel.tp, 2);
  EXPECT_EQ(spec.parallel.pp, 2);
  EXPECT_EQ(spec.model->name, "llama-3-8b");
  EXPECT_EQ(spec.weight_dtype, kernels::DType::BF16);
  EXPECT_EQ(spec.topology_kind, "dgx_a100");
  EXPECT_EQ(spec.topology->num_gpus(), 8);  // one DGX A100 node
  EXPECT_EQ(spec.expected_requests, 12);
  EXPECT_EQ(spec.output_dir, "results/spec");
  EXPECT_EQ(spec.engine_p.integer("max_num_seqs"), 64);
  EXPECT_FALSE(spec.disaggregation.has_value());
  EXPECT_EQ(spec.interconnect_entry, nullptr);  // the built-in fabric
}

TEST(ScenarioSpec, CrossChecksFailBeforeAnyModuleExists) {
  // 3 replicas x TP 2 x PP 2 = 12 GPUs on an 8-GPU node.
  std::string text = kScenario;
  text.replace(text.find("replicas: 2"), 11, "replicas: 3");
  config::Document doc = config::Document::parse(text, "spec.yaml");
  const std::size_t before = systemc_objects();
  try {
    app::read_scenario(doc);
    FAIL() << "12 GPUs on an 8-GPU topology was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.key_path(), "hardware.topology.nodes");
    EXPECT_NE(e.detail().find("needs 12"), std::string::npos) << e.what();
  }
  EXPECT_EQ(systemc_objects(), before);
}

TEST(ScenarioSpec, AnUnknownKeyIsFoundByTheReadNotByTheBuild) {
  std::string text = kScenario;
  text.replace(text.find("max_num_seqs: 64"), 16, "max_num_seq: 64");
  config::Document doc = config::Document::parse(text, "spec.yaml");
  try {
    app::read_scenario(doc);
    FAIL() << "a misspelt key was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.key_path(), "engine.max_num_seq");
    EXPECT_EQ(e.mark().line, 9);
  }
}

TEST(ScenarioSpec, TheSimulationBuildsWhatAnEditedSpecSays) {
  config::Document doc = config::Document::parse(kScenario, "spec.yaml");
  app::ScenarioSpec spec = app::read_scenario(doc);
  spec.replicas = 1;  // a planner editing the typed value instead of the text
  app::Simulation sim(std::move(spec));
  ASSERT_EQ(sim.replicas().size(), 1u);
  EXPECT_NE(sc_core::sc_find_object("replica0.stage1.gpu1"), nullptr);
  EXPECT_EQ(sc_core::sc_find_object("replica1"), nullptr);
  sim.run();
  EXPECT_EQ(sim.completed(), 12);
}
