// Traces that stay whole: a pipeline-parallel TP4 run (tens of thousands of link transfers per
// second of simulated time) keeps every request span and reaches the end of the run within the
// default --trace-limit, and a trace cut by a small limit says what it dropped and what limit
// would keep it all.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;

namespace {

ks::test_support::CliResult kernelsight(const std::string& args) { return ks::test_support::run_cli(KS_CLI, args); }

const std::string kPp = std::string(KS_SOURCE_DIR) + "/scenarios/llama70b_pp2_tp4.yaml";

}  // namespace

TEST(TraceWhole, APipelineParallelRunKeepsEveryRequestSpanAndReachesTheEnd) {
  const fs::path dir = ks::test_support::fresh_temp_path("ks_trace_whole_", "pp");
  const auto r = kernelsight("run " + kPp + " --set workload.num_requests=50 -q --out " + dir.string() + " --trace " +
                             (dir / "t.json").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("TRUNCATED"), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(ks::test_support::read_text(dir / "t.json"));
  EXPECT_EQ(doc["otherData"]["truncated"], false);
  std::set<std::int64_t> requests;
  double last_us = 0, last_request_end_us = 0;
  std::int64_t link_events = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" || e["ph"] == "i") continue;
    last_us = std::max(last_us, e["ts"].get<double>() + e.value("dur", 0.0));
    if (e.value("cat", "") == "request" && e["name"].get<std::string>().rfind("request ", 0) == 0) {
      if (e["ph"] == "b") requests.insert(e["id"].get<std::int64_t>());
      else last_request_end_us = std::max(last_request_end_us, e["ts"].get<double>());
    }
    if (e.value("cat", "") == "link") ++link_events;
  }
  EXPECT_EQ(requests.size(), 50u);  // every request span, begun and ended
  const auto summary = nlohmann::json::parse(ks::test_support::read_text(dir / "summary.json"));
  const double duration_us = summary["duration_s"].get<double>() * 1e6;
  // The timeline covers the whole run: the last request ends at the run's end (within a step).
  EXPECT_GT(last_request_end_us, 0.99 * duration_us) << duration_us;
  EXPECT_GT(last_us, 0.99 * duration_us);
  // Folded: well under the 135k link events the unfolded first 17 steps took.
  EXPECT_LT(link_events, 40000);
  fs::remove_all(dir);
}

TEST(TraceWhole, ATraceCutByTheLimitSaysWhatWasDroppedAndHowToKeepIt) {
  const fs::path dir = ks::test_support::fresh_temp_path("ks_trace_whole_", "cut");
  const auto r = kernelsight("run " + kPp + " --set workload.num_requests=50 -q --trace-limit 20000 --out " +
                             dir.string() + " --trace " + (dir / "t.json").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("TRUNCATED at --trace-limit 20000: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("raise --trace-limit to at least "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel and host spans"), std::string::npos) << r.out;
  const auto doc = nlohmann::json::parse(ks::test_support::read_text(dir / "t.json"));
  EXPECT_EQ(doc["otherData"]["dropped"]["request_spans"], 0);  // 50 x 8 events fit the reserved quarter
  std::set<std::int64_t> requests;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "b" && e.value("cat", "") == "request" && e["name"].get<std::string>().rfind("request ", 0) == 0)
      requests.insert(e["id"].get<std::int64_t>());
  EXPECT_EQ(requests.size(), 50u);
  fs::remove_all(dir);
}
