// examples/user_interconnect as interconnect kind `crossbar` (plug-in) for a TP = 2 run
// (examples/user_interconnect/scenario.yaml, one request, free host launches). Each collective
// lies on the step's critical path, so raising the crossbar's latency by 1 ms lengthens a step
// by exactly 1 ms per collective in it: TTFT by (collectives of the prefill step) ms and TPOT by
// (collectives of a decode step) ms. The counts come from kernels::decompose_step with tp = 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/model_config.hpp"
#include "kernels/step_decomposer.hpp"
#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kScenario = std::string(KS_SOURCE_DIR) + "/examples/user_interconnect/scenario.yaml";
const std::string kPlugin = std::string(" --plugin ") + KS_PLUGIN;

std::int64_t collectives(const ks::kernels::StepBatch& batch) {
  const ks::kernels::ModelConfig* model = ks::kernels::find_builtin_model("llama-3-8b");
  EXPECT_NE(model, nullptr);
  const auto step = ks::kernels::decompose_step(*model, batch, ks::kernels::DType::BF16, ks::kernels::DType::BF16,
                                                ks::kernels::ParallelConfig{2, 1});
  std::int64_t n = 0;
  for (const auto& k : step.pre) n += ks::kernels::is_collective(k.op);
  for (const auto& k : step.per_layer) n += ks::kernels::is_collective(k.op) * step.num_layers;
  for (const auto& k : step.post) n += ks::kernels::is_collective(k.op);
  return n;
}

nlohmann::json run(const std::string& extra, const std::string& tag) {
  const fs::path out = fs::temp_directory_path() / ("ks_user_ic_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = ks::test_support::run_cli(KS_CLI, "run " + kScenario + kPlugin + " -q --out " + out.string() + extra);
  EXPECT_EQ(r.status, 0) << r.out;
  std::ifstream in(out / "summary.json");
  auto j = nlohmann::json::parse(in);
  std::ifstream resolved(out / "config.resolved.yaml");
  const std::string text((std::istreambuf_iterator<char>(resolved)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("kind: crossbar"), std::string::npos);
  fs::remove_all(out);
  return j;
}

}  // namespace

TEST(UserInterconnectKind, EachCollectiveOfAStepCostsTheCrossbarsLatency) {
  ks::kernels::StepBatch prefill, decode;
  prefill.prefills.push_back({256, 0, true});
  decode.decode_contexts.push_back(257);
  const std::int64_t n_prefill = collectives(prefill), n_decode = collectives(decode);
  ASSERT_GT(n_prefill, 0);
  ASSERT_GT(n_decode, 0);

  const auto base = run("", "base");
  const auto slow = run(" --set hardware.interconnect.latency=1005us", "slow");
  EXPECT_EQ(base["completed"].get<int>(), 1);
  EXPECT_EQ(base["tensor_parallel"].get<int>(), 2);
  // One prefill step and 7 decode steps; each collective is one transaction on the crossbar.
  EXPECT_EQ(base["engine_steps"].get<int>(), 8);
  EXPECT_EQ(base["collectives"].get<std::int64_t>(), n_prefill + 7 * n_decode);
  EXPECT_EQ(base["whole_step_launches"].get<int>(), 0) << "a shared crossbar: kernel by kernel";
  EXPECT_NEAR(slow["mean_ttft_ms"].get<double>() - base["mean_ttft_ms"].get<double>(), 1.0 * n_prefill, 1e-6);
  EXPECT_NEAR(slow["mean_tpot_ms"].get<double>() - base["mean_tpot_ms"].get<double>(), 1.0 * n_decode, 1e-6);
}

TEST(UserInterconnectKind, UnknownInterconnectKindListsTheRegisteredOnes) {
  const auto r = ks::test_support::run_cli(KS_CLI, "run " + kScenario + " -q --out /tmp/ks_user_ic_unknown");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("crossbar"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fabric"), std::string::npos) << r.out;
}
