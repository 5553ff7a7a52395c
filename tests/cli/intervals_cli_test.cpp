// `run --intervals`: the kernel model's uncertainty carried to the serving metrics. Checked
// against runs that set the same per-class multipliers by hand (hardware.gpu.kernel_time_scale),
// not against numbers taken from the sampler itself.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

const std::string kScenario = std::string(KS_SOURCE_DIR) + "/scenarios/quickstart.yaml --set workload.num_requests=40";

struct Result {
  int code;
  std::string output;
};

Result kernelsight(const std::string& args) {
  const fs::path log = fs::temp_directory_path() / ("ks_intervals_log_" + std::to_string(::getpid()));
  const int raw = std::system((std::string(KS_CLI) + " " + args + " > " + log.string() + " 2>&1").c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, ss.str()};
}

nlohmann::json summary(const fs::path& dir) {
  std::ifstream in(dir / "summary.json");
  return nlohmann::json::parse(in);
}

fs::path temp(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("ks_intervals_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

std::string write_uncertainty(const std::string& name, const std::string& classes) {
  const fs::path p = temp(name + ".yaml");
  std::ofstream(p) << "probabilities: [0.05, 0.95]\ntiers:\n  cross-gen:\n" << classes;
  return p.string();
}

}  // namespace

// Zero spread at ratio 2 for every class: every sample is "all kernels twice as slow", so the band
// collapses onto the run that sets those multipliers by hand, and lies above the point prediction.
// One request: no queueing feedback, so a token can get at most twice as slow.
TEST(Intervals, AFixedRatioBandEqualsTheHandScaledRun) {
  std::ostringstream ln2_text;
  ln2_text.precision(17);
  ln2_text << std::log(2.0);
  const std::string ln2 = ln2_text.str();
  std::string classes;
  for (const char* c : {"gemm", "attention_prefill", "attention_decode", "norm", "activation", "add", "rope", "embedding"})
    classes += std::string("    ") + c + ": {rows: 1, log_ratio: [" + ln2 + ", " + ln2 + "]}\n";
  const std::string u = write_uncertainty("fixed", classes);
  const fs::path sampled = temp("sampled"), by_hand = temp("by_hand");
  const std::string one = kScenario + " --set workload.num_requests=1";
  const Result r = kernelsight("run " + one + " --intervals 3 -j 2 --uncertainty " + u + " -o " + sampled.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("90% prediction interval (3 samples, tier cross-gen)"), std::string::npos) << r.output;
  ASSERT_EQ(kernelsight("run " + one + " -q -o " + by_hand.string() +
                        " --set hardware.gpu.kernel_time_scale=gemm=2,attention_prefill=2,attention_decode=2,norm=2,"
                        "activation=2,add=2,rope=2,embedding=2")
                .code,
            0);
  const nlohmann::json s = summary(sampled), h = summary(by_hand);
  for (const char* m : {"mean_tpot_ms", "mean_ttft_ms", "mean_e2el_ms"}) {
    const auto& band = s["intervals"]["metrics"][m];
    EXPECT_DOUBLE_EQ(band["p5"].get<double>(), h[m].get<double>()) << m;
    EXPECT_DOUBLE_EQ(band["p95"].get<double>(), h[m].get<double>()) << m;
  }
  // Twice the kernel time: a slower token and first token, but not more than twice (host
  // overheads are unscaled).
  for (const char* m : {"mean_tpot_ms", "mean_ttft_ms"}) {
    const double point = s[m].get<double>(), slow = h[m].get<double>();
    EXPECT_GT(slow, 1.3 * point) << m;
    EXPECT_LE(slow, 2.0 * point) << m;
  }
  // The samples' folders are cleaned up; their table stays.
  EXPECT_TRUE(fs::exists(sampled / "intervals" / "intervals.csv"));
  EXPECT_FALSE(fs::exists(sampled / "intervals" / "sample_0"));
}

// A spread: ordered percentiles, multipliers within the file's outermost ratios, and the same
// bands for the same seed.
TEST(Intervals, SampledBandsAreOrderedBoundedAndReproducible) {
  const std::string u = write_uncertainty("spread", "    gemm: {rows: 1, log_ratio: [-0.5, 0.5]}\n"
                                                    "    attention_decode: {rows: 1, log_ratio: [-0.5, 0.5]}\n");
  const fs::path a = temp("a"), b = temp("b");
  ASSERT_EQ(kernelsight("run " + kScenario + " -q --intervals 6 -j 2 --uncertainty " + u + " -o " + a.string()).code, 0);
  ASSERT_EQ(kernelsight("run " + kScenario + " -q --intervals 6 -j 2 --uncertainty " + u + " -o " + b.string()).code, 0);
  const nlohmann::json s = summary(a);
  EXPECT_EQ(s["intervals"], summary(b)["intervals"]);
  const auto& tpot = s["intervals"]["metrics"]["mean_tpot_ms"];
  EXPECT_LE(tpot["p5"].get<double>(), tpot["p50"].get<double>());
  EXPECT_LE(tpot["p50"].get<double>(), tpot["p95"].get<double>());
  EXPECT_LT(tpot["p5"].get<double>(), tpot["p95"].get<double>());
  std::ifstream csv(a / "intervals" / "intervals.csv");
  std::string line;
  std::getline(csv, line);
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    std::stringstream fields(line);
    std::string sample, gemm;
    std::getline(fields, sample, ',');
    std::getline(fields, gemm, ',');
    EXPECT_GE(std::stod(gemm), std::exp(-0.5) - 1e-6);
    EXPECT_LE(std::stod(gemm), std::exp(0.5) + 1e-6);
  }
  EXPECT_EQ(rows, 6);
}

TEST(Intervals, BadRequestsAreRefusedWithTheReason) {
  const Result one = kernelsight("run " + kScenario + " --intervals 1");
  EXPECT_EQ(one.code, 2);
  EXPECT_NE(one.output.find("--intervals needs at least 2 samples"), std::string::npos) << one.output;
  const Result bad_class = kernelsight("run " + kScenario + " --set hardware.gpu.kernel_time_scale=matmul=2");
  EXPECT_EQ(bad_class.code, 2);
  EXPECT_NE(bad_class.output.find("hardware.gpu.kernel_time_scale"), std::string::npos) << bad_class.output;
  EXPECT_NE(bad_class.output.find("unknown kernel class 'matmul'"), std::string::npos) << bad_class.output;
  const Result no_file = kernelsight("run " + kScenario + " --intervals 2 --uncertainty /nonexistent/u.yaml");
  EXPECT_NE(no_file.code, 0);
  EXPECT_NE(no_file.output.find("/nonexistent/u.yaml"), std::string::npos) << no_file.output;
}

namespace {

double capacity_answer(const std::string& extra, const fs::path& out) {
  const Result r = kernelsight("capacity " + std::string(KS_SOURCE_DIR) +
                               "/scenarios/quickstart.yaml --slo ttft=200ms,tpot=20ms --find rate --min 4/s --seeds 1 "
                               "--set workload.num_requests=200 -o " + out.string() + " " + extra);
  EXPECT_EQ(r.code, 0) << r.output;
  const auto at = r.output.find("answer: ");
  EXPECT_NE(at, std::string::npos) << r.output;
  return at == std::string::npos ? 0 : std::stod(r.output.substr(at + 8));
}

}  // namespace

// Planning against the pessimistic band: every class slower by its 95th-percentile error lowers
// the rate the SLO allows; a percentile outside (0, 100) is refused.
TEST(Intervals, CapacityAgainstThePessimisticBandAnswersLower) {
  const double point = capacity_answer("", temp("cap_point"));
  const double pessimistic = capacity_answer("--kernel-percentile 95", temp("cap_p95"));
  EXPECT_GT(point, 0);
  EXPECT_GT(pessimistic, 0);
  EXPECT_LT(pessimistic, point);
  const Result bad = kernelsight("capacity " + std::string(KS_SOURCE_DIR) +
                                 "/scenarios/quickstart.yaml --slo ttft=200ms --find rate --kernel-percentile 100");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("--kernel-percentile 100: expected a percentile in (0, 100)"), std::string::npos) << bad.output;
}
