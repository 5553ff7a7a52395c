// Shape-family folds on the command line (calibrate --holdout-fold, validate --fold): a set of
// folds nests a split inside the training folds of another, so a modelling choice can be scored
// on families the reported split keeps for training.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>

#include "app/measurement_inputs.hpp"
#include "tests/support/cli_runner.hpp"

namespace fs = std::filesystem;
using ks::app::MeasurementInputs;

namespace {

// 60 GEMM families (N x K), three M each: enough families that every fold of 6 holds some.
fs::path write_sweep() {
  const fs::path dir = ks::test_support::fresh_temp_path("ks_folds_test_", "sweep");
  fs::create_directories(dir);
  const fs::path file = dir / "s.csv";
  std::ofstream out(file);
  out << "gpu,source,model,label,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len,time_us\n";
  for (int f = 0; f < 60; ++f)
    for (int m : {16, 256, 4096})
      out << "a40,x,,,gemm,bf16," << m << ',' << 1024 + 64 * f << ',' << 4096 + 128 * (f % 7) << ",,,,,,,,," << 10 + f
          << '\n';
  return file;
}

// Each row's identity: its family and M.
std::multiset<std::string> rows(const fs::path& sweep, const std::string& fold_text, bool fold_out) {
  MeasurementInputs in;
  in.sweeps = {sweep.string()};
  in.gpu = "a40";
  if (!fold_text.empty()) ks::app::parse_fold("--fold", fold_text, in, fold_out);
  std::multiset<std::string> out;
  for (const auto& m : ks::app::load_measurements(in))
    out.insert(std::to_string(m.shape.m) + 'x' + std::to_string(m.shape.n) + 'x' + std::to_string(m.shape.k));
  return out;
}

std::multiset<std::string> join(std::multiset<std::string> a, const std::multiset<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

TEST(MeasurementFolds, ASetOfSixthsIsTheThirdItRefines) {
  // family_fold is a hash mod K: fold 0 of 3 holds exactly the families of folds 0 and 3 of 6.
  const fs::path sweep = write_sweep();
  const auto third = rows(sweep, "0/3", false);
  ASSERT_GT(third.size(), 0u);
  ASSERT_LT(third.size(), 180u);
  EXPECT_EQ(rows(sweep, "0,3/6", false), third);
  EXPECT_EQ(rows(sweep, "0,3/6", true), rows(sweep, "0/3", true));
}

TEST(MeasurementFolds, NestedSplitPartitionsTheRows) {
  // The reported split holds out 0/3; the nested one fits on 2,4,5/6 and scores 1/6: the three
  // parts are disjoint, cover every row, and the nested score never reads a reported-test row.
  const fs::path sweep = write_sweep();
  const auto all = rows(sweep, "", false);
  ASSERT_EQ(all.size(), 180u);
  const auto reported_test = rows(sweep, "0/3", false);
  const auto inner_fit = rows(sweep, "0,3,1/6", true);
  const auto inner_test = rows(sweep, "1/6", false);
  ASSERT_FALSE(inner_fit.empty());
  ASSERT_FALSE(inner_test.empty());
  EXPECT_EQ(join(join(reported_test, inner_fit), inner_test), all);
  for (const auto& r : inner_test) EXPECT_EQ(reported_test.count(r), 0u) << r;
  for (const auto& r : inner_fit) EXPECT_EQ(inner_test.count(r), 0u) << r;
  EXPECT_EQ(inner_fit, rows(sweep, "2,4,5/6", false));
}

TEST(MeasurementFolds, BadFoldListsAreRefusedByName) {
  MeasurementInputs in;
  for (const std::string bad : {"0,1,2/3", "3/3", "0,/3", ",0/3", "0;1/3", "0/1", "/3", "0,x/3"}) {
    try {
      ks::app::parse_fold("--holdout-fold", bad, in, true);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--holdout-fold " + bad), std::string::npos) << e.what();
    }
  }
}

}  // namespace
