#include "serving/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "base/config/document.hpp"
#include "serving/trace_reader.hpp"
#include "tests/support/schema_params.hpp"

using namespace ks;

namespace {
std::unique_ptr<serving::Workload> make_poisson(const std::string& yaml, std::uint64_t seed) {
  const auto& entry = serving::workload_registry().get("poisson", {}, "workload.kind");
  return entry.make({ks::test_support::resolve_params(yaml, entry.schema), seed});
}
}  // namespace

TEST(PoissonWorkload, MeanInterarrivalIsOneOverRate) {
  auto w = make_poisson("kind: poisson\nrate: 4/s\nnum_requests: 40000\nprompt_tokens: 100\noutput_tokens: 7\n", 1);
  double last = 0;
  int n = 0;
  while (auto r = w->next()) {
    ASSERT_GE(r->arrival_s, last);
    EXPECT_EQ(r->prompt_tokens, 100);
    EXPECT_EQ(r->output_tokens, 7);
    last = r->arrival_s;
    ++n;
  }
  EXPECT_EQ(n, 40000);
  // The sum of n exponentials has mean n/rate and sd sqrt(n)/rate; allow 5 sd.
  EXPECT_NEAR(last, 40000 / 4.0, 5 * std::sqrt(40000.0) / 4.0);
}

TEST(PoissonWorkload, SameSeedSameArrivalsOtherSeedOthers) {
  const std::string yaml = "kind: poisson\nrate: 2/s\nnum_requests: 5\n";
  auto a = make_poisson(yaml, 7), b = make_poisson(yaml, 7), c = make_poisson(yaml, 8);
  for (int i = 0; i < 5; ++i) {
    const double ta = a->next()->arrival_s;
    EXPECT_EQ(ta, b->next()->arrival_s);
    EXPECT_NE(ta, c->next()->arrival_s);
  }
  EXPECT_FALSE(a->next().has_value());
}

// Trace cells are numbers exactly as strtod reads them, whichever way they are written (plain
// decimals take a faster path; spaces, signs, exponents, hex and quotes must not change a value).
TEST(TraceReader, CellsAreNumbersAsStrtodReadsThem) {
  const std::vector<std::string> times = {"0.1", "0.30000000000000004", " 1.7", "2.5 ", "+3.25", "4e0",
                                          "0x5p0", "\"6.125\"", "7.000000000000001", "1e-300"};
  const std::vector<std::string> tokens = {"12", " 13", "+14", "1.5e1", "16.0", "\"17\"", "0x12", "19 ",
                                           "2e1", "21"};
  std::string text = "arrived_at,num_prefill_tokens,num_decode_tokens\n";
  for (std::size_t i = 0; i < times.size(); ++i) text += times[i] + "," + tokens[i] + "," + tokens[i] + "\r\n";
  // "1e-300" comes after 7.0: arrival times may not go backwards, so only the first nine rows.
  text = text.substr(0, text.rfind(times.back()));
  const auto rows = serving::parse_trace(text, "cells.csv", serving::TraceFormat::Auto);
  ASSERT_EQ(rows.size(), times.size() - 1);
  auto strtod_of = [](std::string cell) {
    if (cell.front() == '"') cell = cell.substr(1, cell.size() - 2);
    return std::strtod(cell.c_str(), nullptr);
  };
  const double first = strtod_of(times[0]);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_TRUE(rows[i].arrival_s.has_value());
    EXPECT_EQ(*rows[i].arrival_s, strtod_of(times[i]) - first) << times[i];
    EXPECT_EQ(rows[i].spec.prompt_tokens, static_cast<std::int64_t>(strtod_of(tokens[i]))) << tokens[i];
    EXPECT_EQ(rows[i].spec.output_tokens, static_cast<std::int64_t>(strtod_of(tokens[i]))) << tokens[i];
  }
  // Junk after a number stays an error naming the row, with or without the fast path.
  for (const std::string bad : {"12abc", "1e400", "nan", "", "1.5"}) {
    const std::string file = "arrived_at,num_prefill_tokens,num_decode_tokens\n0," + bad + ",5\n";
    EXPECT_THROW(serving::parse_trace(file, "bad.csv", serving::TraceFormat::Auto), std::runtime_error) << bad;
  }
}
