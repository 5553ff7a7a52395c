// cache.host_kv_bytes end to end: its configuration errors name the key, and a run with the tier
// reports it in summary.json and the trace. One Simulation per TEST (SystemC elaborates once per
// process; a rejected size is found during elaboration).
#include <gtest/gtest.h>

#include <string>

#include "app/simulation.hpp"
#include "base/config/error.hpp"

using namespace ks;

namespace {

// Llama-3-8B: 32 layers x 8 KV heads x 128 x (K + V) x 2 bytes = 128 KiB a token, 2 MiB a
// 16-token block. A100 SXM 80GB: pcie_bandwidth 64 GB/s (Gen4 x16).
const char* kScenario = R"(
name: host_kv
seed: 3
model: {name: llama-3-8b, dtype: bf16}
hardware:
  gpu: {kind: catalog, spec: a100_sxm_80gb, tier: roofline}
workload: {kind: poisson, rate: 1/s, num_requests: 4, prompt_tokens: 300, output_tokens: 5}
)";

std::string rejection(const std::vector<std::string>& overrides) {
  config::Document doc = config::Document::parse(kScenario, "host_kv.yaml");
  try {
    for (const auto& o : overrides) doc.apply_override(o);
    app::Simulation sim(doc);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(HostKvSimulation, ReportsTheTierInTheSummaryAndTheTrace) {
  // Refused while the sections are read, before elaboration:
  EXPECT_NE(rejection({"cache.host_kv_bytes=-1GiB"}).find("cache.host_kv_bytes"), std::string::npos);
  EXPECT_NE(rejection({"cache.host_kv_bytes=64"}).find("cache.host_kv_bytes"), std::string::npos);
  EXPECT_NE(rejection({"cache.host_kv_link_bandwidth=-1GB/s"}).find("cache.host_kv_link_bandwidth"), std::string::npos);

  config::Document doc = config::Document::parse(kScenario, "host_kv.yaml");
  doc.apply_override("cache.host_kv_bytes=1GiB");
  app::Simulation sim(doc);
  sim.enable_trace({});
  sim.run();
  const nlohmann::json j = sim.report();
  ASSERT_TRUE(j.contains("host_kv_cache"));
  const nlohmann::json& h = j["host_kv_cache"];
  EXPECT_EQ(h["capacity_blocks_per_replica"].get<std::int64_t>(), 512);  // 1 GiB / 2 MiB
  EXPECT_DOUBLE_EQ(h["block_bytes_per_gpu"].get<double>(), 2.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(h["link_bandwidth_bytes_per_s"].get<double>(), 25.6e9);  // 0.4 x 64 GB/s
  EXPECT_DOUBLE_EQ(h["link_latency_s"].get<double>(), 10e-6);
  // 4 short requests fit HBM many times over: nothing evicted, nothing copied.
  EXPECT_EQ(h["stored_blocks"].get<std::int64_t>(), 0);
  EXPECT_EQ(h["loaded_blocks"].get<std::int64_t>(), 0);
  EXPECT_EQ(h["delayed_steps"].get<std::int64_t>(), 0);
  EXPECT_EQ(j["completed"].get<int>(), 4);
  EXPECT_NE(sim.trace_json().find("host_kv_blocks"), std::string::npos);
}

TEST(HostKvSimulation, RefusesASizeBelowOneBlockNamingTheKey) {
  const std::string e = rejection({"cache.host_kv_bytes=1MiB"});
  EXPECT_NE(e.find("cache.host_kv_bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("2.00 MiB"), std::string::npos) << e;
}

TEST(HostKvSimulation, RefusesTheTierWithoutPrefixCaching) {
  const std::string e = rejection({"cache.host_kv_bytes=8GiB", "cache.enable_prefix_caching=false"});
  EXPECT_NE(e.find("cache.host_kv_bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("enable_prefix_caching"), std::string::npos) << e;
}

}  // namespace
