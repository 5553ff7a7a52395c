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

TEST(TraceRecorder, StopsAtTheLimitKeepsAQuarterForRequestSpansAndSaysWhatWasDropped) {
  TraceRecorder t({16, 0});  // 12 events for spans, counters and transfers; 4 more for request spans
  const int s = t.track("p", "t");
  for (std::uint64_t i = 0; i < 25; ++i) t.span(s, "e", "c", i * 1000, i * 1000 + 500);
  t.async_span(s, "request 0", "request", 0, 0, 10, {}, {{"queued", 0, 5}});  // 4 events: fits the reserve
  t.async_span(s, "request 1", "request", 1, 0, 10, {}, {{"queued", 0, 5}});  // all or nothing: dropped
  const auto doc = nlohmann::json::parse(t.json());
  EXPECT_EQ(events_with_phase(doc, "X").size(), 12u);
  EXPECT_EQ(events_with_phase(doc, "b").size(), 2u);
  EXPECT_EQ(doc["otherData"]["truncated"], true);
  EXPECT_EQ(doc["otherData"]["dropped_events"], 13 + 4);
  EXPECT_EQ(doc["otherData"]["dropped"]["spans"], 13);
  EXPECT_EQ(doc["otherData"]["dropped"]["request_spans"], 4);
  // 25 spans need 25 / 0.75 -> 34 events; 8 request events need 8 / 0.25 = 32: at least 34.
  EXPECT_EQ(t.truncation_note(),
            "17 events dropped (13 kernel and host spans, 4 request-span events); raise --trace-limit to at least 34 "
            "to keep them all");
  const auto marker = events_with_phase(doc, "i");  // the marker in the timeline
  ASSERT_EQ(marker.size(), 1u);
  EXPECT_EQ(marker[0]["name"], "trace truncated: " + t.truncation_note());

  TraceRecorder enough({34, 0});
  const int e = enough.track("p", "t");
  for (std::uint64_t i = 0; i < 25; ++i) enough.span(e, "e", "c", i * 1000, i * 1000 + 500);
  enough.async_span(e, "request 0", "request", 0, 0, 10, {}, {{"queued", 0, 5}});
  enough.async_span(e, "request 1", "request", 1, 0, 10, {}, {{"queued", 0, 5}});
  EXPECT_FALSE(enough.truncated());
  EXPECT_EQ(enough.truncation_note(), "");
}

TEST(TraceRecorder, LinkTransfersAfterTheDetailedStepsFoldIntoOneEventPerStepAndLink) {
  TraceRecorder t({1000, 20, 2});
  const int link = t.track("fabric", "gpu0->nvswitch0");
  t.transfer(link, 1, 0, 1'000'000, 64);  // step 1 < 2: its own event
  for (int i = 0; i < 3; ++i) t.transfer(link, 2, 2'000'000 + i * 1'000'000, 2'500'000 + i * 1'000'000, 100);
  t.transfer(link, 3, 9'000'000, 9'500'000, 50);
  const auto spans = events_with_phase(nlohmann::json::parse(t.json()), "X");
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0]["name"], "transfer");
  EXPECT_EQ(spans[0]["args"]["bytes"], 64);
  EXPECT_EQ(spans[1]["name"], "step 2");
  EXPECT_EQ(spans[1]["cat"], "link");
  EXPECT_EQ(spans[1]["args"]["transfers"], 3);
  EXPECT_EQ(spans[1]["args"]["bytes"], 300);
  EXPECT_DOUBLE_EQ(spans[1]["ts"].get<double>(), 2.0);   // first start (us) ..
  EXPECT_DOUBLE_EQ(spans[1]["dur"].get<double>(), 2.5);  // .. last finish, 4.5 us
  EXPECT_EQ(spans[2]["args"]["transfers"], 1);
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
