// The `disaggregation:` section's errors: each names the file, line, key path and what was
// expected (found while the sections are read, before anything is elaborated, so one process
// checks them all), and a run's report of both pools.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/simulation.hpp"
#include "base/config/error.hpp"

using namespace ks;

namespace {

const char* kScenario = R"(name: pd
seed: 3
model: {name: llama-3-70b, dtype: bf16}
hardware:
  topology: {kind: dgx_h100}
  gpu: {kind: catalog, spec: h100_sxm, tier: roofline}
disaggregation:
  kv_transfer: whole
  prefill:
    replicas: 1
    tp: 4
  decode:
    replicas: 1
    tp: 4
workload: {kind: poisson, rate: 2/s, num_requests: 4, prompt_tokens: 500, output_tokens: 8}
)";

std::string rejection(const std::string& text, const std::vector<std::string>& overrides = {}) {
  config::Document doc = config::Document::parse(text, "pd.yaml");
  try {
    for (const auto& o : overrides) doc.apply_override(o);
    app::Simulation sim(doc);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

std::string with(const std::string& from, const std::string& to) {
  std::string text = kScenario;
  const auto at = text.find(from);
  if (at == std::string::npos) return "missing " + from;
  return text.replace(at, from.size(), to);
}

bool has(const std::string& e, const std::string& what) { return e.find(what) != std::string::npos; }

}  // namespace

TEST(PdSimulation, BadInputsNameFileLineKeyAndWhatWasExpected) {
  // A misspelt key in a pool: its line (11) and a suggestion.
  std::string e = rejection(with("    tp: 4\n  decode:", "    tpp: 4\n  decode:"));
  EXPECT_TRUE(has(e, "pd.yaml:11")) << e;
  EXPECT_TRUE(has(e, "disaggregation.prefill.tpp")) << e;
  EXPECT_TRUE(has(e, "did you mean 'tp'")) << e;
  // A bad transfer mode lists the choices.
  e = rejection(with("kv_transfer: whole", "kv_transfer: streamed"));
  EXPECT_TRUE(has(e, "pd.yaml:8")) << e;
  EXPECT_TRUE(has(e, "disaggregation.kv_transfer")) << e;
  EXPECT_TRUE(has(e, "whole")) << e;
  EXPECT_TRUE(has(e, "layerwise")) << e;
  // A pool without its section.
  e = rejection(with("  decode:\n    replicas: 1\n    tp: 4\n", ""));
  EXPECT_TRUE(has(e, "disaggregation.decode")) << e;
  // A tp the model's 8 KV heads cannot be split by (line 14).
  e = rejection(with("    replicas: 1\n    tp: 4\nworkload", "    replicas: 1\n    tp: 3\nworkload"));
  EXPECT_TRUE(has(e, "pd.yaml:14")) << e;
  EXPECT_TRUE(has(e, "disaggregation.decode.tp")) << e;
  // A negative replica count.
  e = rejection(kScenario, {"disaggregation.prefill.replicas=0"});
  EXPECT_TRUE(has(e, "disaggregation.prefill.replicas")) << e;
  // More GPUs than the topology has: 8 + 8 on one 8-GPU node.
  e = rejection(kScenario, {"disaggregation.prefill.tp=8", "disaggregation.decode.tp=8"});
  EXPECT_TRUE(has(e, "hardware.topology.nodes")) << e;
  EXPECT_TRUE(has(e, "needs 16")) << e;
  // split_nodes on one node: the decode pool would start on node 2.
  e = rejection(kScenario, {"disaggregation.placement=split_nodes"});
  EXPECT_TRUE(has(e, "hardware.topology.nodes")) << e;
  EXPECT_TRUE(has(e, "split_nodes")) << e;
  // An unknown router kind lists the registered ones.
  e = rejection(kScenario, {"disaggregation.decode.router.kind=fastest"});
  EXPECT_TRUE(has(e, "disaggregation.decode.router.kind")) << e;
  EXPECT_TRUE(has(e, "round_robin")) << e;
  // What is per pool, or not modelled with disaggregation.
  e = rejection(kScenario, {"replicas=2"});
  EXPECT_TRUE(has(e, "key 'replicas'")) << e;
  EXPECT_TRUE(has(e, "disaggregation.prefill.replicas")) << e;
  e = rejection(kScenario, {"router.kind=least_outstanding"});
  EXPECT_TRUE(has(e, "key 'router'")) << e;
  e = rejection(kScenario, {"parallel.tp=4"});
  EXPECT_TRUE(has(e, "parallel.tp")) << e;
  EXPECT_TRUE(has(e, "per pool")) << e;
  e = rejection(kScenario, {"parallel.pp=2"});
  EXPECT_TRUE(has(e, "parallel.pp")) << e;
  EXPECT_TRUE(has(e, "not modelled")) << e;
  e = rejection(kScenario, {"engine.speculative.method=ngram", "engine.speculative.num_speculative_tokens=2",
                            "engine.speculative.acceptance_rate=0.5"});
  EXPECT_TRUE(has(e, "engine.speculative")) << e;
  EXPECT_TRUE(has(e, "not modelled")) << e;
  e = rejection(kScenario, {"cache.host_kv_bytes=8GiB"});
  EXPECT_TRUE(has(e, "cache.host_kv_bytes")) << e;
  // A pool's own GPU section is read with the GPU kind's schema.
  e = rejection(kScenario, {"disaggregation.decode.gpu.spec=h900"});
  EXPECT_TRUE(has(e, "disaggregation.decode.gpu.spec")) << e;
}

// A pool too small for the model: Llama-3-70B's 141 GB of bf16 weights on one H100.
TEST(PdSimulation, RefusesAPoolTheModelDoesNotFitNamingThePool) {
  const std::string e = rejection(kScenario, {"disaggregation.prefill.tp=1"});
  EXPECT_TRUE(has(e, "disaggregation.prefill")) << e;
  EXPECT_TRUE(has(e, "the prefill pool (tp 1 on h100_sxm)")) << e;
}

// Prefill on H200s, decode on H100s (two kinds in one deployment), decode TP2 <- prefill TP4.
TEST(PdSimulation, PoolsMayUseDifferentGpusAndTp) {
  config::Document doc = config::Document::parse(kScenario, "pd.yaml");
  doc.apply_override("disaggregation.prefill.gpu={kind: catalog, spec: h200, tier: roofline}");
  doc.apply_override("disaggregation.decode.tp=2");
  doc.apply_override("disaggregation.decode.replicas=2");
  app::Simulation sim(doc);
  sim.run();
  const nlohmann::json j = sim.report();
  EXPECT_EQ(j["completed"].get<int>(), 4);
  EXPECT_EQ(j["gpu"].get<std::string>(), "h200+h100_sxm");
  const auto& d = j["disaggregation"];
  EXPECT_EQ(d["prefill"]["gpu"].get<std::string>(), "h200");
  EXPECT_EQ(d["decode"]["gpu"].get<std::string>(), "h100_sxm");
  EXPECT_EQ(d["decode"]["first_device"].get<int>(), 4);
  EXPECT_EQ(d["decode"]["gpus"].get<int>(), 4);
  // TP4 -> TP2: decode rank 0 gets heads 0-3 from prefill ranks 0 and 1, rank 1 from 2 and 3.
  const auto& shares = d["kv_transfer"]["rank_shares"];
  ASSERT_EQ(shares.size(), 4u);
  EXPECT_EQ(shares[1]["prefill_rank"].get<int>(), 1);
  EXPECT_EQ(shares[1]["decode_rank"].get<int>(), 0);
  EXPECT_EQ(shares[2]["decode_rank"].get<int>(), 1);
  EXPECT_EQ(d["kv_transfer"]["rank_copies"].get<int>(), 16);
  // Round-robin over the two decode replicas (global indices 1 and 2).
  int on[3] = {0, 0, 0};
  for (const auto& r : sim.requests()) ++on[r.replica];
  EXPECT_EQ(on[1], 2);
  EXPECT_EQ(on[2], 2);
}
