// The trace recorder on its own: valid trace-event JSON, exact microsecond times, named tracks,
// kernels folded per step after the detailed steps, and the event limit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/util/trace_recorder.hpp"

using ks::util::TraceOptions;
using ks::util::TraceRecorder;

namespace {

std::vector<nlohmann::json> events_with_phase(const nlohmann::json& doc, const std::string& ph) {
  std::vector<nlohmann::json> out;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

}  // namespace

TEST(TraceRecorder, NamesTracksAndWritesExactMicroseconds) {
  TraceRecorder t;
  const int host = t.track("replica0", "host");
  const int gpu = t.track("replica0 gpu0", "stream 0");
  EXPECT_EQ(t.track("replica0", "host"), host);  // same names, same track
  t.span(host, "step 0", "step", 1'000'000, 3'500'001, R"({"kernels":2})");  // 1 us .. 3.500001 us
  t.kernel(gpu, 0, "qkv \"proj\"", "prefill", 2'000'000, 2'250'000);
  const std::string text = t.json();
  const auto doc = nlohmann::json::parse(text);
  EXPECT_NE(text.find("\"ts\":1.000000,\"dur\":2.500001"), std::string::npos) << text;

  const auto meta = events_with_phase(doc, "M");
  std::vector<std::string> names;
  for (const auto& m : meta)
    if (m["name"] == "process_name" || m["name"] == "thread_name") names.push_back(m["args"]["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"replica0", "host", "replica0 gpu0", "stream 0"}));

  const auto spans = events_with_phase(doc, "X");
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[1]["name"], "qkv \"proj\"");  // escaped, then parsed back
  EXPECT_DOUBLE_EQ(spans[1]["dur"].get<double>(), 0.25);
  EXPECT_NE(spans[0]["pid"], spans[1]["pid"]);
  EXPECT_EQ(doc["otherData"]["truncated"], false);
  EXPECT_EQ(t.events(), 2u);
}

TEST(TraceRecorder, KernelsAfterTheDetailedStepsFoldIntoOneEventPerStep) {
  TraceRecorder t({1000, 2});
  const int s = t.track("gpu", "stream 0");
  for (std::uint64_t step = 0; step < 4; ++step)
    for (int k = 0; k < 3; ++k) {
      const std::uint64_t start = step * 100'000'000 + static_cast<std::uint64_t>(k) * 10'000'000;
      t.kernel(s, step, "k" + std::to_string(k), "decode", start, start + 5'000'000);
    }
  const auto spans = events_with_phase(nlohmann::json::parse(t.json()), "X");
  ASSERT_EQ(spans.size(), 3u * 2 + 2);  // steps 0, 1 per kernel; steps 2, 3 one each
  EXPECT_EQ(spans[6]["name"], "step 2");
  EXPECT_EQ(spans[6]["args"]["kernels"], 3);
  EXPECT_DOUBLE_EQ(spans[6]["ts"].get<double>(), 200.0);  // first start .. last finish
  EXPECT_DOUBLE_EQ(spans[6]["dur"].get<double>(), 25.0);
  EXPECT_EQ(spans[7]["name"], "step 3");
}

TEST(TraceRecorder, StopsAtTheLimitAndSaysSo) {
  TraceRecorder t({10, 0});
  const int s = t.track("p", "t");
  for (std::uint64_t i = 0; i < 25; ++i) t.span(s, "e", "c", i * 1000, i * 1000 + 500);
  t.async_span(s, "request 0", "request", 0, 0, 10, {}, {{"queued", 0, 5}});  // all or nothing
  const auto doc = nlohmann::json::parse(t.json());
  EXPECT_EQ(events_with_phase(doc, "X").size(), 10u);
  EXPECT_TRUE(events_with_phase(doc, "b").empty());
  EXPECT_EQ(doc["otherData"]["truncated"], true);
  EXPECT_EQ(doc["otherData"]["dropped_events"], 15 + 4);
  EXPECT_EQ(events_with_phase(doc, "i").size(), 1u);  // the marker in the timeline
}

TEST(TraceRecorder, AsyncSpansNestTheirPhasesInOrder) {
  TraceRecorder t;
  const int s = t.track("replica0", "requests");
  t.async_span(s, "request 7", "request", 7, 1'000'000, 9'000'000, R"({"prompt_tokens":5})",
               {{"queued", 1'000'000, 2'000'000}, {"prefill", 2'000'000, 4'000'000}, {"decode", 4'000'000, 9'000'000}});
  t.counter(s, "queue", 9'000'000, {{"running", 3}, {"waiting", 1}});
  const auto doc = nlohmann::json::parse(t.json());
  std::vector<std::string> order;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "b" || e["ph"] == "e") {
      order.push_back(e["ph"].get<std::string>() + ":" + e["name"].get<std::string>());
      EXPECT_EQ(e["id"], 7);
    }
  EXPECT_EQ(order, (std::vector<std::string>{"b:request 7", "b:queued", "e:queued", "b:prefill", "e:prefill",
                                             "b:decode", "e:decode", "e:request 7"}));
  const auto counters = events_with_phase(doc, "C");
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0]["args"]["running"], 3);
  EXPECT_EQ(counters[0]["args"]["waiting"], 1);
}
