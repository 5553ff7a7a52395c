// `kernelsight fit-host` as a user runs it; the figures quoted in docs/hardware.md must be the
// ones it prints.
#include <gtest/gtest.h>

#include "tests/support/cli_runner.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using Result = ks::test_support::CliResult;

Result kernelsight(const std::string& args) { return ks::test_support::run_cli(KS_CLI, args); }

}  // namespace

TEST(FitHostCli, PrintsCoefficientsAndLeaveOneModelOutErrorsQuotedInTheDocs) {
  const Result r = kernelsight("fit-host");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("## a100 (78 samples)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("## a40 (221 samples)"), std::string::npos) << r.out;
  std::ifstream docs_file(std::string(KS_SOURCE_DIR) + "/docs/hardware.md");
  std::stringstream docs;
  docs << docs_file.rdbuf();
  std::istringstream lines(r.out);
  int table_rows = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| ", 0) == 0 && line.find("---") == std::string::npos) {
      ++table_rows;
      EXPECT_NE(docs.str().find(line), std::string::npos) << "docs/hardware.md lacks: " << line;
    }
  EXPECT_EQ(table_rows, 2 * (1 + 4 + 1 + 4));  // per set: header, 4 phases, header, 4 error rows
}

TEST(FitHostCli, MissingMeasurementsExitWithStatus2) {
  const Result r = kernelsight("fit-host --measurements /nonexistent/overheads.csv");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("/nonexistent/overheads.csv"), std::string::npos) << r.out;
}
