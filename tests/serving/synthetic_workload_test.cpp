// Synthetic and trace workloads: statistics of the draws, prefix identities, trace formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include "base/config/document.hpp"
#include "base/config/error.hpp"
#include "serving/router.hpp"
#include "serving/trace_reader.hpp"
#include "serving/workload.hpp"

using namespace ks;

namespace {
std::deque<config::Document> docs;  // Params keep marks; keep documents alive

std::unique_ptr<serving::Workload> make(const std::string& kind, const std::string& yaml, std::uint64_t seed = 1) {
  docs.push_back(config::Document::parse("kind: " + kind + "\n" + yaml, "test.yaml"));
  const auto& entry = serving::workload_registry().get(kind, {}, "workload.kind");
  return entry.make({docs.back().root().resolve(entry.schema), seed});
}

std::vector<serving::RequestSpec> drain(serving::Workload& w) {
  std::vector<serving::RequestSpec> out;
  while (auto r = w.next()) out.push_back(*r);
  return out;
}

double cv_of_gaps(const std::vector<serving::RequestSpec>& rs, double* mean_out) {
  double sum = 0, sq = 0, last = 0;
  for (const auto& r : rs) {
    const double g = r.arrival_s - last;
    last = r.arrival_s;
    sum += g, sq += g * g;
  }
  const double n = static_cast<double>(rs.size()), mean = sum / n;
  *mean_out = mean;
  return std::sqrt(sq / n - mean * mean) / mean;
}
}  // namespace

TEST(SyntheticWorkload, GammaArrivalsHaveTheRequestedRateAndBurstiness) {
  auto w = make("synthetic", "arrival: gamma\nrate: 5/s\ncv: 3\nnum_requests: 40000\n");
  double mean = 0;
  const double cv = cv_of_gaps(drain(*w), &mean);
  EXPECT_NEAR(mean, 0.2, 0.2 * 0.05);
  EXPECT_NEAR(cv, 3.0, 0.3);
  auto p = make("synthetic", "arrival: poisson\nrate: 5/s\nnum_requests: 40000\n");
  EXPECT_NEAR(cv_of_gaps(drain(*p), &mean), 1.0, 0.05);
}

TEST(SyntheticWorkload, ConstantArrivalsAndDurationLimit) {
  auto w = make("synthetic", "arrival: constant\nrate: 4/s\nnum_requests: 0\nduration: 10s\n");
  const auto rs = drain(*w);
  ASSERT_EQ(rs.size(), 40u);  // at 0.25, 0.5, ..., 10.0
  EXPECT_DOUBLE_EQ(rs[0].arrival_s, 0.25);
  EXPECT_DOUBLE_EQ(rs.back().arrival_s, 10.0);
  EXPECT_EQ(w->max_concurrency(), 0);
  EXPECT_THROW(make("synthetic", "num_requests: 0\n"), config::ConfigError);  // unbounded
}

TEST(SyntheticWorkload, ClosedLoopDeclaresItsConcurrency) {
  auto w = make("synthetic", "arrival: closed_loop\nconcurrency: 12\nnum_requests: 30\n");
  EXPECT_EQ(w->max_concurrency(), 12);
  EXPECT_EQ(drain(*w).size(), 30u);
}

TEST(SyntheticWorkload, LengthDistributions) {
  auto w = make("synthetic",
                "num_requests: 20000\nprompt_dist: lognormal\nprompt_tokens: 400\nprompt_std: 200\n"
                "output_dist: uniform\noutput_min: 10\noutput_max: 20\n");
  double sum = 0, sq = 0;
  const auto rs = drain(*w);
  for (const auto& r : rs) {
    sum += static_cast<double>(r.prompt_tokens), sq += static_cast<double>(r.prompt_tokens * r.prompt_tokens);
    EXPECT_GE(r.output_tokens, 10);
    EXPECT_LE(r.output_tokens, 20);
  }
  const double n = static_cast<double>(rs.size()), mean = sum / n;
  EXPECT_NEAR(mean, 400, 8);
  EXPECT_NEAR(std::sqrt(sq / n - mean * mean), 200, 12);
  auto normal = make("synthetic", "num_requests: 2000\nprompt_dist: normal\nprompt_tokens: 50\nprompt_std: 100\nprompt_min: 5\n");
  for (const auto& r : drain(*normal)) EXPECT_GE(r.prompt_tokens, 5);  // clamped
}

TEST(SyntheticWorkload, SharedSystemPromptsGoToTheRequestedFraction) {
  auto w = make("synthetic",
                "num_requests: 10000\nprompt_tokens: 100\nshared_prefix_fraction: 0.3\nshared_prefix_tokens: 700\n"
                "prefix_groups: 3\n");
  int shared = 0;
  for (const auto& r : drain(*w)) {
    if (r.prefix_group == 0) {
      EXPECT_EQ(r.prompt_tokens, 100);
      continue;
    }
    ++shared;
    EXPECT_GE(r.prefix_group, 1u);
    EXPECT_LE(r.prefix_group, 3u);
    EXPECT_EQ(r.group_tokens, 700);
    EXPECT_EQ(r.prompt_tokens, 800);
  }
  EXPECT_NEAR(shared / 10000.0, 0.3, 0.02);
}

TEST(SyntheticWorkload, ConversationTurnsExtendTheirContext) {
  auto w = make("synthetic", "rate: 0.01/s\nnum_requests: 3\nturns: 3\nthink_time: 2s\nprompt_tokens: 50\noutput_tokens: 20\n");
  const auto rs = drain(*w);
  ASSERT_EQ(rs.size(), 3u);  // one conversation (the next starts ~100 s later)
  EXPECT_EQ(rs[0].prompt_tokens, 50);
  EXPECT_EQ(rs[1].prompt_tokens, 50 + 20 + 50);
  EXPECT_EQ(rs[2].prompt_tokens, 120 + 20 + 50);
  EXPECT_DOUBLE_EQ(rs[1].arrival_s, rs[0].arrival_s + 2);
  EXPECT_DOUBLE_EQ(rs[2].arrival_s, rs[0].arrival_s + 4);
  for (const auto& r : rs) {
    EXPECT_EQ(r.prefix_group, rs[0].prefix_group);
    EXPECT_EQ(r.group_tokens, r.prompt_tokens + r.output_tokens);
  }
}

TEST(SyntheticWorkload, SameSeedSameRequests) {
  const std::string y = "arrival: gamma\ncv: 2\nnum_requests: 100\nprompt_dist: normal\nprompt_std: 30\nturns: 2\n";
  const auto a = drain(*make("synthetic", y, 5)), b = drain(*make("synthetic", y, 5)), c = drain(*make("synthetic", y, 6));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival_s, b[i].arrival_s);
    EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
  }
  EXPECT_NE(a[1].arrival_s, c[1].arrival_s);
}

TEST(TraceWorkload, ReadsVidurAzureAndJsonl) {
  auto vidur = make("trace", "path: data/traces/splitwise_conv_1000.csv\nnum_requests: 3\nspeedup: 2\n");
  const auto v = drain(*vidur);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].prompt_tokens, 374);
  EXPECT_EQ(v[0].output_tokens, 44);
  EXPECT_DOUBLE_EQ(v[1].arrival_s, 4.314579 / 2);

  auto azure = make("trace", "path: data/traces/azure_conv_sample.csv\n");
  const auto a = drain(*azure);
  ASSERT_EQ(a.size(), 200u);
  EXPECT_EQ(a[1].prompt_tokens, 396);
  EXPECT_NEAR(a[1].arrival_s, 4.314579, 1e-6);  // same rows as the Vidur file

  auto jsonl = make("trace", "path: data/traces/shared_prefix.jsonl\n");
  const auto j = drain(*jsonl);
  ASSERT_EQ(j.size(), 40u);
  EXPECT_EQ(j[1].prefix_group, 2u);  // file group 1, shifted so 0 means none
  EXPECT_EQ(j[1].group_tokens, 512);
  EXPECT_DOUBLE_EQ(j[1].arrival_s, 0.25);
}

// Benchmark case 0 samples trace lengths with prompt + output <= 4096, as Vidur's max_tokens.
TEST(SyntheticWorkload, TraceLengthsAboveTheLimitAreDropped) {
  const std::string base = "prompt_dist: trace\noutput_dist: trace\nnum_requests: 3000\n"
                           "length_trace: data/traces/splitwise_conv.csv\n";
  std::int64_t longest = 0;
  for (const auto& r : drain(*make("synthetic", base))) longest = std::max(longest, r.prompt_tokens + r.output_tokens);
  EXPECT_GT(longest, 4096);  // the trace has longer pairs
  for (const auto& r : drain(*make("synthetic", base + "length_trace_max_tokens: 4096\n")))
    EXPECT_LE(r.prompt_tokens + r.output_tokens, 4096);
  EXPECT_THROW(make("synthetic", base + "length_trace_max_tokens: 1\n"), config::ConfigError);  // nothing left
}

TEST(TraceWorkload, BadFilesAreConfigErrors) {
  EXPECT_THROW(make("trace", "path: /nonexistent.csv\n"), config::ConfigError);
  // Length-only traces cannot be replayed in time.
  EXPECT_THROW(make("trace", "path: data/traces/arxiv_summarization_lengths_1000.csv\n"), config::ConfigError);
  EXPECT_NEAR(serving::parse_timestamp("2023-11-16 18:15:47.5") - serving::parse_timestamp("2023-11-16 18:15:46"), 1.5, 1e-9);
  EXPECT_DOUBLE_EQ(serving::parse_timestamp("1970-01-02 00:00:00"), 86400.0);
}

TEST(Routers, LeastOutstandingAndPrefixAffinity) {
  docs.push_back(config::Document::parse("kind: x\n", "r.yaml"));
  auto lo = serving::router_registry().get("least_outstanding", {}, "router.kind");
  auto router = lo.make({docs.back().root().resolve(lo.schema)});
  serving::Request r;
  EXPECT_EQ(router->route(r, {{3}, {1}, {1}, {2}}), 1u);

  docs.push_back(config::Document::parse("max_imbalance: 2\n", "r.yaml"));
  auto pa = serving::router_registry().get("prefix_affinity", {}, "router.kind");
  auto affinity = pa.make({docs.back().root().resolve(pa.schema)});
  r.prefix_group = 9;
  EXPECT_EQ(affinity->route(r, {{1}, {0}}), 1u);  // first seen: least loaded becomes home
  EXPECT_EQ(affinity->route(r, {{0}, {2}}), 1u);  // stays home within the imbalance
  EXPECT_EQ(affinity->route(r, {{0}, {3}}), 0u);  // overloaded: moves
  EXPECT_EQ(affinity->route(r, {{1}, {0}}), 0u);  // new home
  serving::Request plain;
  EXPECT_EQ(affinity->route(plain, {{4}, {0}}), 1u);
}
