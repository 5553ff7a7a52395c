#include "serving/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace ks::serving {
namespace {

// Expected values worked out by hand with numpy's linear rule: index = (n - 1) * q / 100.
TEST(Percentile, MatchesNumpyLinear) {
  const std::vector<double> v = {4, 1, 3, 2};  // sorted: 1 2 3 4
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);    // index 1.5
  EXPECT_DOUBLE_EQ(percentile(v, 90), 3.7);    // index 2.7
  EXPECT_DOUBLE_EQ(percentile(v, 99), 3.97);   // index 2.97
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4.0);
  const std::vector<double> w = {50, 10, 40, 20, 30};
  EXPECT_DOUBLE_EQ(percentile(w, 25), 20.0);  // index 1 exactly
  EXPECT_DOUBLE_EQ(percentile(w, 90), 46.0);  // index 3.6: 40 + 0.6 * 10
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7.0);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0.0);
  EXPECT_THROW(percentile(v, 101), std::invalid_argument);
  EXPECT_THROW(percentile(v, -1), std::invalid_argument);
}

TEST(LatencyStats, PopulationStdInMilliseconds) {
  const LatencyStats s = latency_stats({0.1, 0.3, 0.2});
  EXPECT_NEAR(s.mean_ms, 200.0, 1e-9);
  EXPECT_NEAR(s.median_ms, 200.0, 1e-9);
  EXPECT_NEAR(s.std_ms, std::sqrt((100.0 * 100 + 100.0 * 100) / 3.0), 1e-9);  // ddof = 0
  EXPECT_NEAR(s.p90_ms, 280.0, 1e-9);
  const LatencyStats empty = latency_stats({});
  EXPECT_EQ(empty.mean_ms, 0.0);
  EXPECT_EQ(empty.p99_ms, 0.0);
  EXPECT_EQ(empty.std_ms, 0.0);
}

// r1: 11 tokens, TTFT 100 ms, 1000 ms for the other 10 -> TPOT 100 ms.
// r2: a single token: TTFT 300 ms, no TPOT.
// r3: 5 tokens, TTFT 200 ms, 800 ms for the other 4 -> TPOT 200 ms.
std::vector<RequestRecord> sample_requests() {
  return {{1, 0.0, 0.1, 1.1, 10, 11}, {2, 1.0, 1.3, 1.3, 20, 1}, {3, 2.0, 2.2, 3.0, 30, 5}};
}

std::vector<double> sample_itls() {
  std::vector<double> itls(10, 0.1);
  itls.insert(itls.end(), 4, 0.2);
  return itls;
}

TEST(Summarize, TpotExcludesFirstTokenAndSingleTokenRequests) {
  const BenchmarkSummary s = summarize(sample_requests(), sample_itls(), 4.0);
  EXPECT_NEAR(s.tpot.mean_ms, 150.0, 1e-9);  // (100 + 200) / 2; r2 would drag it to 100
  EXPECT_NEAR(s.tpot.median_ms, 150.0, 1e-9);
  EXPECT_NEAR(s.tpot.std_ms, 50.0, 1e-9);
  EXPECT_NEAR(s.ttft.mean_ms, 200.0, 1e-9);
  EXPECT_NEAR(s.ttft.p99_ms, 298.0, 1e-9);  // index 1.98 over {100, 200, 300}
  EXPECT_NEAR(s.e2el.median_ms, 1000.0, 1e-9);
  EXPECT_NEAR(s.e2el.mean_ms, 800.0, 1e-9);
  EXPECT_NEAR(s.itl.mean_ms, 1800.0 / 14.0, 1e-9);
  EXPECT_NEAR(s.itl.median_ms, 100.0, 1e-9);
}

TEST(Summarize, ThroughputArithmetic) {
  const BenchmarkSummary s = summarize(sample_requests(), sample_itls(), 4.0);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.total_input_tokens, 60);
  EXPECT_EQ(s.total_output_tokens, 17);
  EXPECT_DOUBLE_EQ(s.request_throughput, 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(s.output_throughput, 17.0 / 4.0);
  EXPECT_DOUBLE_EQ(s.total_token_throughput, 77.0 / 4.0);
}

TEST(Summarize, EmptyRunIsAllZero) {
  const BenchmarkSummary s = summarize({}, LatencySamples{}, 0.0);
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.request_throughput, 0.0);
  EXPECT_EQ(s.ttft.mean_ms, 0.0);
  EXPECT_EQ(s.tpot.p99_ms, 0.0);
}

// Reference text produced by vLLM's own format strings ("{:<40} {:<10.2f}", "{s:{c}^{n}}")
// in Python for the same inputs.
TEST(FormatTable, MatchesVllmBenchServeLayout) {
  const std::string expected =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     3         \n"
      "Benchmark duration (s):                  4.00      \n"
      "Total input tokens:                      60        \n"
      "Total generated tokens:                  17        \n"
      "Request throughput (req/s):              0.75      \n"
      "Output token throughput (tok/s):         4.25      \n"
      "Total Token throughput (tok/s):          19.25     \n"
      "---------------Time to First Token----------------\n"
      "Mean TTFT (ms):                          200.00    \n"
      "Median TTFT (ms):                        200.00    \n"
      "P99 TTFT (ms):                           298.00    \n"
      "-----Time per Output Token (excl. 1st token)------\n"
      "Mean TPOT (ms):                          150.00    \n"
      "Median TPOT (ms):                        150.00    \n"
      "P99 TPOT (ms):                           199.00    \n"
      "---------------Inter-token Latency----------------\n"
      "Mean ITL (ms):                           128.57    \n"
      "Median ITL (ms):                         100.00    \n"
      "P99 ITL (ms):                            200.00    \n"
      "----------------End-to-end Latency----------------\n"
      "Mean E2EL (ms):                          800.00    \n"
      "Median E2EL (ms):                        1000.00   \n"
      "P99 E2EL (ms):                           1098.00   \n"
      "==================================================\n";
  EXPECT_EQ(format_table(summarize(sample_requests(), sample_itls(), 4.0)), expected);
}

TEST(ToJson, HasEveryKey) {
  const nlohmann::json j = to_json(summarize(sample_requests(), sample_itls(), 4.0));
  for (const char* key : {"completed", "duration_s", "total_input_tokens", "total_output_tokens",
                          "request_throughput", "output_throughput", "total_token_throughput"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* m : {"ttft", "tpot", "itl", "e2el"}) {
    for (const char* stat : {"mean", "median", "p90", "p99", "std"}) {
      const std::string key = std::string(stat) + "_" + m + "_ms";
      EXPECT_TRUE(j.contains(key)) << key;
    }
  }
  EXPECT_EQ(j.size(), 7u + 4u * 5u);
  EXPECT_EQ(j["completed"].get<std::int64_t>(), 3);
  EXPECT_NEAR(j["mean_tpot_ms"].get<double>(), 150.0, 1e-9);
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 4.0);
}

}  // namespace
}  // namespace ks::serving
