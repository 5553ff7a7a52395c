// The kernelsight binary as a user runs it: exit codes, messages, outputs, determinism.
#include <gtest/gtest.h>

#include "tests/support/cli_runner.hpp"
#include "tests/support/trace_events.hpp"
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

using Result = ks::test_support::CliResult;

using ks::test_support::run_shell;

Result kernelsight(const std::string& args) { return ks::test_support::run_cli(KS_CLI, args); }

// The same with stdout and stderr on a pseudo-terminal (script(1)), as in an interactive shell.
Result kernelsight_on_terminal(const std::string& args) {
  return run_shell("script -qec '" + std::string(KS_CLI) + " " + args + "' /dev/null");
}

std::string read(const fs::path& p) { return ks::test_support::read_text(p); }

fs::path temp_dir(const std::string& name) { return ks::test_support::fresh_temp_path("ks_cli_test_", name); }

const std::string kQuickstart = std::string(KS_SOURCE_DIR) + "/scenarios/quickstart.yaml";

}  // namespace

TEST(Cli, RunWritesSummaryWithTheVllmBenchKeysDeterministically) {
  const fs::path a = temp_dir("a"), b = temp_dir("b");
  const std::string set = " --set workload.num_requests=300 --set workload.rate=6/s";
  const Result ra = kernelsight("run " + kQuickstart + set + " --out " + a.string());
  ASSERT_EQ(ra.status, 0) << ra.out;
  EXPECT_NE(ra.out.find("============ Serving Benchmark Result ============"), std::string::npos);
  EXPECT_NE(ra.out.find("Successful requests:                     300"), std::string::npos) << ra.out;
  const Result rb = kernelsight("run " + kQuickstart + set + " -q --out " + b.string());
  ASSERT_EQ(rb.status, 0) << rb.out;

  const std::string sa = read(a / "summary.json");
  EXPECT_EQ(sa, read(b / "summary.json"));  // same scenario + seed: byte-identical
  const std::string requests = read(a / "requests.csv");
  EXPECT_EQ(requests, read(b / "requests.csv"));
  EXPECT_EQ(read(a / "kernels.csv"), read(b / "kernels.csv"));
  EXPECT_EQ(std::count(requests.begin(), requests.end(), '\n'), 301);  // header + one row per request
  EXPECT_EQ(requests.rfind("id,replica,arrival_s,", 0), 0u) << requests.substr(0, 200);
  EXPECT_NE(read(a / "kernels.csv").find("\nqkv_proj,gemm,decode,"), std::string::npos);
  const auto j = nlohmann::json::parse(sa);
  for (const char* key : {"completed", "duration_s", "request_throughput", "output_throughput",
                          "total_token_throughput"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* stat : {"mean", "median", "p99"})
    for (const char* m : {"ttft", "tpot", "itl", "e2el"})
      EXPECT_TRUE(j.contains(std::string(stat) + "_" + m + "_ms")) << stat << "_" << m;
  EXPECT_EQ(j["completed"], 300);

  // The resolved configuration records the overrides and the defaults that were used.
  const std::string resolved = read(a / "config.resolved.yaml");
  EXPECT_NE(resolved.find("num_requests: 300"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("launch_overhead:"), std::string::npos) << resolved;

  // Another seed gives other arrivals.
  const fs::path c = temp_dir("c");
  ASSERT_EQ(kernelsight("run " + kQuickstart + set + " --set seed=7 -q --out " + c.string()).status, 0);
  EXPECT_NE(sa, read(c / "summary.json"));
  fs::remove_all(a), fs::remove_all(b), fs::remove_all(c);
}

TEST(Cli, GoodputCountsTheRequestsWithinTheSlos) {
  const fs::path a = temp_dir("slo");
  const std::string base = "run " + kQuickstart + " --set workload.num_requests=100 -q --out " + a.string();
  ASSERT_EQ(kernelsight(base + " --slo ttft=10s,tpot=1s").status, 0);
  auto j = nlohmann::json::parse(read(a / "summary.json"));
  EXPECT_EQ(j["good_requests"], 100);  // generous limits: all good
  EXPECT_DOUBLE_EQ(j["request_goodput"].get<double>(), j["request_throughput"].get<double>());
  ASSERT_EQ(kernelsight(base + " --slo tpot=0.001").status, 0);  // 1 us per token: none
  j = nlohmann::json::parse(read(a / "summary.json"));
  EXPECT_EQ(j["good_requests"], 0);
  EXPECT_EQ(kernelsight(base + " --slo latency=3ms").status, 2);
  fs::remove_all(a);
}

TEST(Cli, PrefixCachingCutsTtftOnASharedPrefixWorkload) {
  const fs::path on = temp_dir("pc_on"), off = temp_dir("pc_off");
  const std::string base = "run " + std::string(KS_SOURCE_DIR) + "/scenarios/shared_prefix.yaml -q --set workload.num_requests=200";
  ASSERT_EQ(kernelsight(base + " --out " + on.string()).status, 0);
  ASSERT_EQ(kernelsight(base + " --set cache.enable_prefix_caching=false --out " + off.string()).status, 0);
  const auto a = nlohmann::json::parse(read(on / "summary.json")), b = nlohmann::json::parse(read(off / "summary.json"));
  EXPECT_EQ(a["completed"], 200);
  EXPECT_EQ(b["completed"], 200);
  EXPECT_GT(a["prefix_cache_hit_rate"].get<double>(), 0.5);
  EXPECT_EQ(b["prefix_cache_hit_rate"].get<double>(), 0.0);
  EXPECT_LT(a["mean_ttft_ms"].get<double>(), 0.5 * b["mean_ttft_ms"].get<double>());
  EXPECT_EQ(a["total_input_tokens"], b["total_input_tokens"]);  // the same requests
  fs::remove_all(on), fs::remove_all(off);
}

TEST(Cli, AMisspeltKeyExitsTwoNamingTheKeyAndLine) {
  const fs::path dir = temp_dir("typo");
  fs::create_directories(dir);
  std::string yaml = read(kQuickstart);
  const auto pos = yaml.find("  num_requests:");
  ASSERT_NE(pos, std::string::npos);
  yaml.replace(pos, 15, "  num_reqests:");
  const int line = 1 + static_cast<int>(std::count(yaml.begin(), yaml.begin() + static_cast<long>(pos), '\n'));
  std::ofstream(dir / "typo.yaml") << yaml;
  const Result r = kernelsight("run " + (dir / "typo.yaml").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("typo.yaml:" + std::to_string(line) + ":"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("workload.num_reqests"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'num_requests'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "out" / "summary.json"));
  fs::remove_all(dir);
}

TEST(Cli, BadOverridesUnitsAndKindsExitTwo) {
  Result r = kernelsight("run " + kQuickstart + " --set workload.rate=fast");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--set workload.rate=fast"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rate"), std::string::npos) << r.out;

  r = kernelsight("run " + kQuickstart + " --set hardware.gpu.kind=quantum");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown gpu kind 'quantum'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("catalog"), std::string::npos) << r.out;

  r = kernelsight("run " + kQuickstart + " --set model.name=gpt-9");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("llama-3-8b"), std::string::npos) << r.out;  // lists the known models

  r = kernelsight("run /nonexistent/scenario.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("/nonexistent/scenario.yaml"), std::string::npos) << r.out;

  r = kernelsight("run " + kQuickstart + " --set model.name=llama-2-70b");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("does not fit"), std::string::npos) << r.out;
}

TEST(Cli, ListDescribeAndHelp) {
  Result r = kernelsight("list");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* s : {"gpu:", "catalog", "host:", "fixed_overhead", "scheduler:", "vllm_v1", "workload:",
                        "poisson", "router:", "round_robin", "h100_sxm", "llama-3-8b"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;

  r = kernelsight("describe poisson");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rate"), std::string::npos);
  EXPECT_NE(r.out.find("required"), std::string::npos);
  EXPECT_NE(r.out.find("default: 1000"), std::string::npos) << r.out;

  r = kernelsight("describe gpu.catalog");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("kernel_overhead"), std::string::npos);
  EXPECT_NE(r.out.find("time"), std::string::npos);

  EXPECT_EQ(kernelsight("describe warp_drive").status, 2);
  EXPECT_EQ(kernelsight("frobnicate").status, 2);
  for (const char* cmd : {"--help", "run --help", "list --help", "describe --help"}) {
    r = kernelsight(cmd);
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("kernelsight"), std::string::npos) << cmd;
  }
}

// Hypothetical hardware and user models: overrides over a catalog GPU, a spec file, a config.json.
TEST(Cli, GpuOverridesSpecFilesAndHfConfigs) {
  const std::string set = " --set workload.num_requests=100 -q";
  auto tpot = [](const fs::path& dir) {
    return nlohmann::json::parse(read(dir / "summary.json"))["mean_tpot_ms"].get<double>();
  };
  const fs::path base = temp_dir("base"), fast = temp_dir("fast"), file = temp_dir("file");
  ASSERT_EQ(kernelsight("run " + kQuickstart + set + " --out " + base.string()).status, 0);
  // Decode is memory-bound: twice the HBM bandwidth must cut TPOT clearly.
  Result r = kernelsight("run " + kQuickstart + set + " --set hardware.gpu.hbm_bandwidth=6.7TB/s --out " +
                         fast.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_LT(tpot(fast), 0.8 * tpot(base));
  r = kernelsight("run " + kQuickstart + set + " --set hardware.gpu.spec_file=" + std::string(KS_SOURCE_DIR) +
                  "/data/gpus/h100_sxm.yaml --out " + file.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read(base / "summary.json"), read(file / "summary.json"));  // same numbers as the catalog

  r = kernelsight("run " + kQuickstart + set + " --set hardware.gpu.peak_bf16=fast");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("hardware.gpu.peak_bf16"), std::string::npos) << r.out;

  const fs::path phi = temp_dir("phi");
  r = kernelsight("run " + kQuickstart + set + " --set model.config=" + std::string(KS_SOURCE_DIR) +
                  "/data/models/phi-2.json --out " + phi.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(read(phi / "summary.json"))["model"], "phi-2");
  r = kernelsight("run " + kQuickstart + set + " --set model.config=/nonexistent/config.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("model.config"), std::string::npos) << r.out;
  for (const auto& d : {base, fast, file, phi}) fs::remove_all(d);
}

using ks::test_support::trace_events;
using ks::test_support::trace_track;

// One request alone: its TTFT is exactly the first engine step, which the host track shows as
// "step 0"; the GPU stream shows that step's kernels inside it; two runs give the same bytes.
TEST(Cli, TraceShowsTheStepsKernelsAndRequestsDeterministically) {
  const fs::path a = temp_dir("trace_a"), b = temp_dir("trace_b");
  const std::string set = " --set workload.num_requests=1 --set workload.output_tokens=8 -q";
  const Result ra = kernelsight("run " + kQuickstart + set + " --out " + a.string() + " --trace " + (a / "t.json").string());
  ASSERT_EQ(ra.status, 0) << ra.out;
  EXPECT_NE(ra.out.find("ui.perfetto.dev"), std::string::npos) << ra.out;
  ASSERT_EQ(kernelsight("run " + kQuickstart + set + " --out " + b.string() + " --trace " + (b / "t.json").string()).status, 0);
  const std::string text = read(a / "t.json");
  EXPECT_EQ(text, read(b / "t.json"));

  const auto doc = nlohmann::json::parse(text);  // throws (fails the test) if not valid JSON
  const auto summary = nlohmann::json::parse(read(a / "summary.json"));
  const auto host = trace_track(doc, "host"), stream = trace_track(doc, "stream 0"), reqs = trace_track(doc, "requests");
  ASSERT_NE(host.first, -1) << text.substr(0, 2000);
  ASSERT_NE(stream.first, -1);
  ASSERT_NE(reqs.first, -1);
  EXPECT_NE(host.first, stream.first);  // the GPU is its own process group

  double step0_ts = -1, step0_dur = -1, kernel_us = 0, kernel_end = 0;
  int host_steps = 0, kernels = 0, step0_kernels = -1;
  std::vector<std::string> phases;
  for (const auto& e : trace_events(doc, "X")) {
    const std::pair<int, int> where{e["pid"].get<int>(), e["tid"].get<int>()};
    if (where == host && e["cat"] == "step") {
      ++host_steps;
      if (e["name"] == "step 0") step0_ts = e["ts"], step0_dur = e["dur"], step0_kernels = e["args"]["kernels"];
    }
    if (where == host && e["cat"] == "host" && phases.size() < 4) phases.push_back(e["name"]);
    if (where == stream && e["args"]["step"] == 0) {
      ++kernels;
      EXPECT_TRUE(e["args"].contains("bound") && e["args"].contains("layer") && e["args"].contains("flops")) << e;
      kernel_us += e["dur"].get<double>();
      kernel_end = std::max(kernel_end, e["ts"].get<double>() + e["dur"].get<double>());
    }
  }
  EXPECT_EQ(host_steps, 8);  // one prefill step, then one decode step per further token
  EXPECT_EQ(host_steps, summary["engine_steps"]);
  EXPECT_EQ(phases, (std::vector<std::string>{"prepare", "launch", "wait", "finish"}));
  EXPECT_NEAR(step0_dur / 1e3, summary["mean_ttft_ms"].get<double>(), 1e-6);
  EXPECT_EQ(kernels, step0_kernels);  // the GPU ran every kernel the host launched in step 0
  EXPECT_GT(kernels, 100);  // per-kernel events in the first steps (32 layers x several kernels)
  EXPECT_LT(kernel_us, step0_dur);
  EXPECT_LE(kernel_end, step0_ts + step0_dur);

  // The request: queued -> prefill -> decode, its prefill ending at the first token.
  std::vector<std::string> request;
  double prefill_b = -1, prefill_e = -1;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "b" && e["ph"] != "e") continue;
    request.push_back(e["ph"].get<std::string>() + ":" + e["name"].get<std::string>());
    if (e["name"] == "prefill") (e["ph"] == "b" ? prefill_b : prefill_e) = e["ts"];
  }
  EXPECT_EQ(request, (std::vector<std::string>{"b:request 0", "b:queued", "e:queued", "b:prefill", "e:prefill",
                                               "b:decode", "e:decode", "e:request 0"}));
  EXPECT_NEAR((prefill_e - prefill_b) / 1e3, summary["mean_ttft_ms"].get<double>(), 1e-6);
  EXPECT_FALSE(trace_events(doc, "C").empty());  // queue and KV-cache counters
  EXPECT_EQ(doc["otherData"]["truncated"], false);
  fs::remove_all(a), fs::remove_all(b);
}

TEST(Cli, TraceLimitBoundsTheFileAndSaysItWasTruncated) {
  const fs::path a = temp_dir("trace_limit");
  const Result r = kernelsight("run " + kQuickstart + " --set workload.num_requests=20 -q --trace-limit 500 --out " +
                               a.string() + " --trace " + (a / "t.json").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("TRUNCATED at --trace-limit 500"), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(read(a / "t.json"));
  std::size_t kept = 0;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] != "M" && e["ph"] != "i") ++kept;
  EXPECT_LE(kept, 500u);  // three quarters for steps, kernels and counters, the rest for whole request spans
  EXPECT_GT(kept, 490u);
  EXPECT_EQ(doc["otherData"]["truncated"], true);
  EXPECT_GT(doc["otherData"]["dropped_events"].get<int>(), 0);
  fs::remove_all(a);
}

// Tensor parallelism: each GPU of the replica has its stream, and the all-reduces their track.
TEST(Cli, TraceOfATensorParallelRunHasACollectiveTrack) {
  const fs::path a = temp_dir("trace_tp");
  const Result r = kernelsight("run " + kQuickstart + " --set workload.num_requests=2 --set parallel.tp=2 -q --out " +
                               a.string() + " --trace " + (a / "t.json").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const auto doc = nlohmann::json::parse(read(a / "t.json"));
  std::set<std::string> processes;
  for (const auto& m : trace_events(doc, "M"))
    if (m["name"] == "process_name") processes.insert(m["args"]["name"].get<std::string>());
  EXPECT_EQ(processes, (std::set<std::string>{"replica0", "replica0 gpu0 (device 0)", "replica0 gpu1 (device 1)",
                                              "replica0 TP collectives", "links of dgx_h100"}));
  const auto coll = trace_track(doc, "collectives over");
  int all_reduces = 0;
  for (const auto& e : trace_events(doc, "X"))
    if (e["pid"] == coll.first && e["tid"] == coll.second && e["cat"] == "collective") ++all_reduces;
  EXPECT_GT(all_reduces, 0);
  // A track per link the all-reduces crossed (GPU to NVSwitch and back), each with its transfers,
  // none longer than the collective span that contains it.
  std::set<std::string> links;
  for (const auto& m : trace_events(doc, "M"))
    if (m["name"] == "thread_name" && m["args"]["name"].get<std::string>().find("->") != std::string::npos)
      links.insert(m["args"]["name"].get<std::string>());
  EXPECT_EQ(links, (std::set<std::string>{"gpu0->node0_nvswitch", "node0_nvswitch->gpu1", "gpu1->node0_nvswitch",
                                          "node0_nvswitch->gpu0"}));
  const auto up = trace_track(doc, "gpu0->node0_nvswitch");
  int transfers = 0;
  for (const auto& e : trace_events(doc, "X"))
    if (e["pid"] == up.first && e["tid"] == up.second) {
      EXPECT_EQ(e["cat"], "link");
      EXPECT_GT(e["args"]["bytes"].get<double>(), 0);
      transfers += e["args"].value("transfers", 1);  // after the first steps, one event per step and link
    }
  EXPECT_GE(transfers, all_reduces);  // a 2-rank ring: every all-reduce sends from gpu0 at least once
  fs::remove_all(a);
}

// stderr is a pipe here: no progress bar (no carriage returns, no bar text).
TEST(Cli, NoProgressBarWhenStderrIsNotATerminal) {
  const fs::path a = temp_dir("noprogress");
  const Result r = kernelsight("run " + kQuickstart + " --set workload.num_requests=50 --out " + a.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos);
  EXPECT_EQ(r.out.find("requests  sim"), std::string::npos);
  fs::remove_all(a);
}

// With a terminal (script(1) provides one) the bar is drawn, and slicing the run for it does not
// change the results.
TEST(Cli, ProgressBarOnATerminalLeavesTheResultsUnchanged) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) not available";
  const fs::path a = temp_dir("progress_tty"), b = temp_dir("progress_pipe");
  const std::string set = " --set workload.num_requests=200 --set workload.rate=20/s";
  const Result tty = kernelsight_on_terminal("run " + kQuickstart + set + " --out " + a.string());
  ASSERT_EQ(tty.status, 0) << tty.out;
  EXPECT_NE(tty.out.find("requests  sim"), std::string::npos) << tty.out;
  ASSERT_EQ(kernelsight("run " + kQuickstart + set + " --out " + b.string()).status, 0);
  EXPECT_EQ(read(a / "summary.json"), read(b / "summary.json"));
  EXPECT_EQ(read(a / "requests.csv"), read(b / "requests.csv"));
  const Result quiet = kernelsight_on_terminal("run " + kQuickstart + set + " -q --out " + a.string());
  EXPECT_EQ(quiet.out.find("requests  sim"), std::string::npos) << quiet.out;
  fs::remove_all(a), fs::remove_all(b);
}
