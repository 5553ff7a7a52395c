#include "serving/workload.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "sc_modules/config/document.hpp"
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
