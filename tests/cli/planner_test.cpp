// The pure logic behind `sweep` and `capacity`: sweep files, point names, the SLO verdict and the
// searches (against known thresholds instead of simulations).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "app/capacity_search.hpp"
#include "app/sweep_plan.hpp"

namespace fs = std::filesystem;
using namespace ks::app;

namespace {

fs::path write_temp(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("ks_planner_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  std::ofstream(dir / "base.yaml") << "name: base\n";
  return dir / name;
}

}  // namespace

TEST(SweepPlan, AGridIsTheCartesianProductInFileOrderWithValuesAsWritten) {
  const fs::path path = write_temp("g.yaml",
                                   "base: base.yaml\nset: {seed: 3}\ngrid:\n  workload.rate: [1/s, 2.50/s]\n"
                                   "  hardware.gpu: [{kind: catalog, spec: a100}, h100]\n  replicas: [1, 2, 4]\n");
  const SweepPlan plan = load_sweep(path.string());
  EXPECT_EQ(plan.name, "g");
  EXPECT_EQ(plan.base, (path.parent_path() / "base.yaml").string());
  ASSERT_EQ(plan.points.size(), 12u);
  EXPECT_EQ(plan.swept_keys, (std::vector<std::string>{"workload.rate", "hardware.gpu", "replicas"}));
  EXPECT_EQ(plan.assignments(0), (std::vector<std::string>{"seed=3", "workload.rate=1/s",
                                                           "hardware.gpu={kind: catalog, spec: a100}", "replicas=1"}));
  EXPECT_EQ(plan.assignments(1).back(), "replicas=2");
  EXPECT_EQ(plan.assignments(3)[2], "hardware.gpu=h100");
  EXPECT_EQ(plan.assignments(11), (std::vector<std::string>{"seed=3", "workload.rate=2.50/s", "hardware.gpu=h100", "replicas=4"}));
  EXPECT_EQ(plan.points[5].swept[1].mark.line, 5);  // where the sweep file gives the value
}

TEST(SweepPlan, PointsListTheirKeysInOrderOfFirstUse) {
  const fs::path path = write_temp("p.yaml", "name: listed\nbase: base.yaml\npoints:\n  - {a.b: 1}\n  - {c: x, a.b: 2}\n");
  const SweepPlan plan = load_sweep(path.string());
  EXPECT_EQ(plan.name, "listed");
  EXPECT_EQ(plan.swept_keys, (std::vector<std::string>{"a.b", "c"}));
  EXPECT_EQ(plan.assignments(1), (std::vector<std::string>{"c=x", "a.b=2"}));
}

TEST(SweepPlan, PointNamesAreZeroPaddedToSortInOrder) {
  EXPECT_EQ(point_name(7, 12), "0007");
  EXPECT_EQ(point_name(12345, 20000), "12345");
  EXPECT_EQ(point_name(3, 20000), "00003");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
  EXPECT_EQ(csv_field("plain"), "plain");
}

TEST(CapacitySearch, MeetingMeansEveryRequestDoneAndTheStatisticWithinEachLimit) {
  const nlohmann::json s = {{"completed", 100}, {"submitted", 100}, {"p99_ttft_ms", 1999.0},
                            {"p99_tpot_ms", 50.5},  {"median_ttft_ms", 10.0}, {"median_tpot_ms", 20.0}};
  ks::serving::Slo slo;
  slo.ttft_s = 2.0;
  EXPECT_TRUE(judge(s, slo, "p99").meets);
  slo.tpot_s = 0.050;
  const Verdict v = judge(s, slo, "p99");
  EXPECT_FALSE(v.meets);
  EXPECT_EQ(v.why, "p99 TPOT 50.5 ms > 50 ms");
  EXPECT_TRUE(judge(s, slo, "median").meets);
  nlohmann::json unfinished = s;
  unfinished["completed"] = 99;
  EXPECT_EQ(judge(unfinished, slo, "median").why, "99 of 100 requests completed");
  EXPECT_FALSE(judge(s, slo, "mean").meets);  // no such statistic in the summary: not met
  EXPECT_THROW(judge(s, slo, "p95"), std::invalid_argument);
}

TEST(CapacitySearch, TheRateSearchBracketsThenBisectsToTheTolerance) {
  for (const double threshold : {0.3, 1.0, 7.77, 123.4}) {
    RateSearch o;
    o.tolerance = 0.02;
    const SearchResult r = search_rate(o, [&](double rate) { return rate <= threshold; });
    EXPECT_LE(r.answer, threshold);
    EXPECT_GT(r.answer * (1 + o.tolerance), threshold) << threshold;
    EXPECT_FALSE(r.at_limit);
    EXPECT_LT(r.probes.size(), 20u);
  }
  RateSearch capped;
  capped.max = 10;
  const SearchResult r = search_rate(capped, [](double) { return true; });
  EXPECT_EQ(r.answer, 10);
  EXPECT_TRUE(r.at_limit);

  RateSearch from_min;
  from_min.min = 5;
  EXPECT_THROW(search_rate(from_min, [](double rate) { return rate < 4; }), std::invalid_argument);
  from_min.max = 5;
  EXPECT_THROW(search_rate(from_min, [](double) { return true; }), std::invalid_argument);  // min >= max
  EXPECT_THROW(search_rate(RateSearch{}, [](double) { return false; }), std::invalid_argument);
}

TEST(CapacitySearch, TheReplicaSearchFindsTheFewestThatPass) {
  for (const int need : {1, 2, 3, 5, 8, 13, 64}) {
    std::vector<int> probed;
    const SearchResult r = search_replicas(64, [&](int n) {
      probed.push_back(n);
      return n >= need;
    });
    EXPECT_EQ(r.answer, need);
    if (need > 1) {
      EXPECT_NE(std::find(probed.begin(), probed.end(), need - 1), probed.end()) << need;
    }
  }
  EXPECT_THROW(search_replicas(4, [](int n) { return n >= 5; }), std::invalid_argument);
}
