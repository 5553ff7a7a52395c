// Speculative decoding and context-length enforcement through the kernelsight binary: step
// counts and timing of a single request against hand-built kernels, the summary.json block,
// trace rejections, and the errors of bad input (file:line, key, what was expected).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/gpu_spec.hpp"
#include "kernels/kernel_builders.hpp"
#include "kernels/model_config.hpp"
#include "kernels/roofline.hpp"
#include "kernels/step_decomposer.hpp"
#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;
using namespace ks;

namespace {

test_support::CliResult kernelsight(const std::string& args) { return test_support::run_cli(KS_CLI, args); }
fs::path temp_dir(const std::string& name) { return test_support::fresh_temp_path("ks_spec_test_", name); }

// One request of 16 prompt and 8 output tokens on a roofline H100 without host costs, so that a
// step takes exactly the roofline time of its kernels.
std::string scenario(const std::string& speculative, const std::string& workload = "") {
  return std::string(R"(name: spec
model: {name: llama-3-8b, dtype: bf16}
hardware:
  gpu: {kind: catalog, spec: h100_sxm, tier: roofline, kernel_overhead: 0us}
  host: {kind: fixed_overhead, prepare_overhead: 0us, finish_overhead: 0us, launch_overhead: 0us}
engine:
  kind: vllm_v1
)") + speculative +
         (workload.empty() ? "workload: {kind: poisson, rate: 1/s, num_requests: 1, prompt_tokens: 16, output_tokens: 8}\n"
                           : workload);
}

struct CliRun {
  int status;
  std::string out;
  nlohmann::json summary;
};

CliRun run(const fs::path& dir, const std::string& yaml, const std::string& extra = "") {
  fs::create_directories(dir);
  std::ofstream(dir / "s.yaml") << yaml;
  const auto r = kernelsight("run " + (dir / "s.yaml").string() + " " + extra + " --out " + (dir / "out").string());
  CliRun result{r.status, r.out, {}};
  if (r.status == 0) result.summary = nlohmann::json::parse(test_support::read_text(dir / "out" / "summary.json"));
  return result;
}

const kernels::ModelConfig& llama() { return *kernels::find_builtin_model("llama-3-8b"); }
const kernels::GpuSpec& h100() { return *kernels::find_builtin_gpu("h100_sxm"); }

double roofline(const kernels::StepKernels& k) {
  double s = 0;
  for (const auto& x : k.pre) s += kernels::roofline_cost(x, h100(), 0).seconds;
  for (const auto& x : k.per_layer) s += k.num_layers * kernels::roofline_cost(x, h100(), 0).seconds;
  for (const auto& x : k.post) s += kernels::roofline_cost(x, h100(), 0).seconds;
  return s;
}

// An EAGLE head pass over `contexts` (one query each): one Llama-3-8B layer, the embedding, the
// LM head and the fusion GEMM [tokens x 8192] . [8192 x 4096].
double eagle_pass(const std::vector<std::int64_t>& contexts) {
  kernels::ModelConfig head = llama();
  head.num_layers = 1;
  kernels::StepBatch b;
  b.decode_contexts = contexts;
  const auto tokens = static_cast<std::int64_t>(contexts.size());
  const kernels::Kernel fc = kernels::make_gemm("fc", tokens, 4096, 8192, kernels::DType::BF16, 2, 2);
  return roofline(kernels::decompose_step(head, b, kernels::DType::BF16, kernels::DType::BF16)) +
         kernels::roofline_cost(fc, h100(), 0).seconds;
}

double verify(std::int64_t context, std::int64_t queries) {
  kernels::StepBatch b;
  b.decode_contexts = {context};
  const std::vector<std::int64_t> q{queries};
  kernels::StepKernels k;
  kernels::decompose_step(llama(), b, &q, kernels::DType::BF16, kernels::DType::BF16, {}, k);
  return roofline(k);
}

}  // namespace

// k = 3, everything accepted: the prefill emits token 1 (16 prompt tokens computed); step 2
// verifies the last token and 3 drafts at context 17 (KV 16 + the token itself) and emits 4;
// step 3 can draft only 2 (3 tokens left) at context 21 and emits 3. The head runs one pass per
// draft before each verification: contexts 17, 18, 19 then 21, 22. TPOT x 7 = steps 2 + 3.
TEST(SpecDecodeCli, FullAcceptanceTakesTwoVerificationsPricedAsKernels) {
  const CliRun r = run(temp_dir("full"), scenario(R"(  speculative: {method: eagle, num_speculative_tokens: 3, acceptance_rate: 1.0}
)"));
  ASSERT_EQ(r.status, 0) << r.out;
  const auto& s = r.summary;
  EXPECT_EQ(s["completed"], 1);
  EXPECT_EQ(s["total_output_tokens"], 8);
  EXPECT_EQ(s["engine_steps"], 3);
  EXPECT_EQ(s["spec_decode_method"], "eagle");
  EXPECT_EQ(s["spec_decode_num_drafts"], 2);
  EXPECT_EQ(s["spec_decode_num_draft_tokens"], 5);
  EXPECT_EQ(s["spec_decode_num_accepted_tokens"], 5);
  EXPECT_DOUBLE_EQ(s["spec_decode_acceptance_rate"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(s["spec_decode_mean_acceptance_length"].get<double>(), 3.5);  // 1 + 5 / 2
  EXPECT_DOUBLE_EQ(s["spec_decode_expected_acceptance_length"].get<double>(), 4.0);
  EXPECT_EQ(s["spec_decode_proposer_passes"], 1 + 3 + 2);  // the prompt's pass, then one per draft
  const double step2 = eagle_pass({17}) + eagle_pass({18}) + eagle_pass({19}) + verify(17, 4);
  const double step3 = eagle_pass({21}) + eagle_pass({22}) + verify(21, 3);
  EXPECT_NEAR(s["mean_tpot_ms"].get<double>(), (step2 + step3) / 7 * 1e3, 1e-6);
  // Two streamed chunks: ITL = the two steps (vLLM's ITL is per chunk, TPOT per token).
  EXPECT_NEAR(s["mean_itl_ms"].get<double>(), (step2 + step3) / 2 * 1e3, 1e-6);
  // The table prints the block.
  EXPECT_NE(r.out.find("Acceptance length:"), std::string::npos) << r.out;
  // An MTP module is priced as the same one-layer head with its fusion GEMM.
  const CliRun mtp = run(temp_dir("mtp"), scenario(R"(  speculative: {method: mtp, num_speculative_tokens: 3, acceptance_rate: 1.0}
)"));
  ASSERT_EQ(mtp.status, 0) << mtp.out;
  EXPECT_EQ(mtp.summary["spec_decode_method"], "mtp");
  EXPECT_NEAR(mtp.summary["mean_tpot_ms"].get<double>(), (step2 + step3) / 7 * 1e3, 1e-6);
}

// Nothing accepted: one token per step, 1 prefill + 7 decodes.
TEST(SpecDecodeCli, ZeroAcceptanceEmitsOneTokenPerStep) {
  const CliRun r = run(temp_dir("zero"), scenario(R"(  speculative: {method: ngram, num_speculative_tokens: 4, acceptance_rate: 0.0}
)"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.summary["engine_steps"], 8);
  EXPECT_EQ(r.summary["spec_decode_num_accepted_tokens"], 0);
  EXPECT_DOUBLE_EQ(r.summary["spec_decode_mean_acceptance_length"].get<double>(), 1.0);
  EXPECT_EQ(r.summary["spec_decode_proposer_passes"], 0);  // n-gram lookup: CPU only
  // 6 drafting steps (the last decode has nothing to draft) x 10 us of lookup.
  EXPECT_NEAR(r.summary["spec_decode_proposer_cpu_seconds"].get<double>(), 6 * 10e-6, 1e-12);
}

// A draft model's kernels are its own rows in kernels.csv: Llama-3.2-1B's 16 layers per pass.
TEST(SpecDecodeCli, DraftModelKernelsAreReportedApart) {
  const fs::path dir = temp_dir("draft");
  const CliRun r = run(dir, scenario(R"(  speculative: {method: draft_model, draft_model: llama-3.2-1b, num_speculative_tokens: 3, acceptance_rate: 1.0}
)"));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string csv = test_support::read_text(dir / "out" / "kernels.csv");
  // 6 passes x 16 layers = 96 launches of the draft's qkv_proj (prefill and decode rows).
  std::int64_t launches = 0;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("draft_qkv_proj,", 0) != 0) continue;
    std::istringstream fields(line);
    std::string name, op, phase, count;
    std::getline(fields, name, ',');
    std::getline(fields, op, ',');
    std::getline(fields, phase, ',');
    std::getline(fields, count, ',');
    launches += std::stoll(count);
  }
  EXPECT_EQ(launches, 96) << csv;
  EXPECT_GT(r.summary["kv_cache_blocks_per_replica"].get<int>(), 0);
}

// The speculative section changes nothing when absent; the same scenario without it.
TEST(SpecDecodeCli, WithoutSpeculationEveryTokenIsAStep) {
  const CliRun r = run(temp_dir("off"), scenario(""));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.summary["engine_steps"], 8);
  EXPECT_FALSE(r.summary.contains("spec_decode_method"));
  EXPECT_FALSE(r.summary.contains("max_model_len"));
}

TEST(ContextLengthCli, GeneratedRequestsLongerThanTheModelAreAScenarioError) {
  // Llama-3-8B: max_position_embeddings 8192; 8000 + 500 = 8500 tokens.
  CliRun r = run(temp_dir("long"), scenario("", "workload: {kind: poisson, rate: 1/s, num_requests: 2, prompt_tokens: 8000, output_tokens: 500}\n"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("s.yaml:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("8000 prompt + 500 output tokens = 8500, longer than the context length 8192 (the model's "
                       "max_position_embeddings)"),
            std::string::npos)
      << r.out;
  // engine.max_model_len lowers the limit (and names itself) ...
  r = run(temp_dir("short_len"), scenario("  max_model_len: 1024\n", "workload: {kind: poisson, rate: 1/s, num_requests: 2, prompt_tokens: 1000, output_tokens: 100}\n"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("longer than the context length 1024 (engine.max_model_len)"), std::string::npos) << r.out;
  // ... but cannot exceed the model's.
  r = run(temp_dir("too_long_len"), scenario("  max_model_len: 9000\n"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("engine.max_model_len"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max_position_embeddings = 8192"), std::string::npos) << r.out;
  // Within the limit it runs and reports the limit.
  r = run(temp_dir("ok_len"), scenario("  max_model_len: 1024\n"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.summary["max_model_len"], 1024);
  EXPECT_EQ(r.summary["context_length_rejected_requests"], 0);
}

// TensorRT-LLM's limit is the engine's max_seq_len, which trtllm-bench builds from the dataset:
// the trtllm profile does not cap at max_position_embeddings (NVIDIA's Llama-2 128/4096 rows
// need 4224 tokens of a 4096-position model); engine.max_model_len still caps it.
TEST(ContextLengthCli, TheTensorRtLlmProfileTakesTheWorkloadsLengths) {
  const std::string workload =
      "workload: {kind: poisson, rate: 1/s, num_requests: 1, prompt_tokens: 128, output_tokens: 4096}\n";
  std::string yaml = scenario("", workload);
  yaml.replace(yaml.find("llama-3-8b"), 10, "llama-2-7b");
  CliRun r = run(temp_dir("vllm_cap"), yaml);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("4224, longer than the context length 4096"), std::string::npos) << r.out;
  r = run(temp_dir("trtllm_cap"), "profile: trtllm\n" + yaml);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.summary["total_output_tokens"], 4096);
  EXPECT_FALSE(r.summary.contains("max_model_len"));
  r = run(temp_dir("trtllm_set"), "profile: trtllm\n" + yaml, "--set engine.max_model_len=4096");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("(engine.max_model_len)"), std::string::npos) << r.out;
}

// A trace's request over the limit is rejected (as vLLM's server answers 400) and counted.
TEST(ContextLengthCli, TraceRequestsLongerThanTheLimitAreRejectedAndCounted) {
  const fs::path dir = temp_dir("trace");
  fs::create_directories(dir);
  std::ofstream(dir / "t.jsonl") << R"({"arrival_s": 0.0, "prompt_tokens": 100, "output_tokens": 10}
{"arrival_s": 0.1, "prompt_tokens": 1000, "output_tokens": 100}
{"arrival_s": 0.2, "prompt_tokens": 200, "output_tokens": 20}
)";
  const CliRun r = run(dir, scenario("  max_model_len: 1000\n", "workload: {kind: trace, path: t.jsonl}\n"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.summary["completed"], 2);
  EXPECT_EQ(r.summary["total_input_tokens"], 300);
  EXPECT_EQ(r.summary["context_length_rejected_requests"], 1);
}

TEST(SpecDecodeCli, BadInputNamesTheKeyAndWhatWasExpected) {
  struct Case {
    const char* name;
    std::string section;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"list_length", "  speculative: {method: ngram, num_speculative_tokens: 3, acceptance: \"0.9, 0.8\"}\n",
       {"engine.speculative.acceptance", "has 2 positions, expected 3"}},
      {"list_item", "  speculative: {method: ngram, num_speculative_tokens: 2, acceptance: \"0.9, x\"}\n",
       {"engine.speculative.acceptance", "item 2 'x' is not a number"}},
      {"list_range", "  speculative: {method: ngram, num_speculative_tokens: 2, acceptance: \"0.9 1.5\"}\n",
       {"engine.speculative.acceptance", "not a probability in [0, 1]"}},
      {"both", "  speculative: {method: ngram, num_speculative_tokens: 2, acceptance: \"0.9 0.5\", acceptance_rate: 0.5}\n",
       {"engine.speculative", "not both"}},
      {"neither", "  speculative: {method: ngram, num_speculative_tokens: 2}\n",
       {"engine.speculative", "acceptance_rate (one probability) or acceptance (one per draft position)"}},
      {"rate_range", "  speculative: {method: ngram, num_speculative_tokens: 2, acceptance_rate: 1.5}\n",
       {"engine.speculative.acceptance_rate"}},
      {"no_draft", "  speculative: {method: draft_model, num_speculative_tokens: 2, acceptance_rate: 0.5}\n",
       {"engine.speculative", "needs the draft"}},
      {"draft_for_eagle", "  speculative: {method: eagle, draft_model: llama-3.2-1b, num_speculative_tokens: 2, acceptance_rate: 0.5}\n",
       {"engine.speculative.draft_model", "only for method draft_model"}},
      {"unknown_draft", "  speculative: {method: draft_model, draft_model: llama-0b, num_speculative_tokens: 2, acceptance_rate: 0.5}\n",
       {"engine.speculative.draft_model", "unknown model 'llama-0b'", "llama-3.2-1b"}},
      {"other_vocab", "  speculative: {method: draft_model, draft_model: llama-2-7b, num_speculative_tokens: 2, acceptance_rate: 0.5}\n",
       {"engine.speculative.draft_model", "share the target's tokenizer"}},
      {"bad_method", "  speculative: {method: medusa, num_speculative_tokens: 2, acceptance_rate: 0.5}\n",
       {"engine.speculative.method"}},
      {"misspelt", "  speculative: {method: ngram, num_speculative_tokens: 2, acceptance_rat: 0.5}\n",
       {"acceptance_rat"}},
  };
  for (const Case& c : cases) {
    const CliRun r = run(temp_dir(c.name), scenario(c.section));
    EXPECT_EQ(r.status, 2) << c.name << ": " << r.out;
    EXPECT_NE(r.out.find("s.yaml:"), std::string::npos) << c.name << ": " << r.out;
    for (const std::string& e : c.expected) EXPECT_NE(r.out.find(e), std::string::npos) << c.name << ": " << r.out;
  }
  // Pipeline parallelism is not modelled with it.
  const CliRun pp = run(temp_dir("pp"), scenario("  speculative: {method: ngram, num_speculative_tokens: 2, acceptance_rate: 0.5}\n"),
                     "--set parallel.pp=2");
  EXPECT_EQ(pp.status, 2) << pp.out;
  EXPECT_NE(pp.out.find("pipeline parallelism"), std::string::npos) << pp.out;
}
