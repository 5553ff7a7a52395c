#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "kernels/number_list.hpp"

using namespace ks::kernels;

namespace {

// Writes the list the way calibration files do and reads the file back.
YAML::Node written(const std::string& list) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "values" << YAML::Value << YAML::SingleQuoted << list << YAML::EndMap;
  return YAML::Load(out.c_str())["values"];
}

std::string error_of(const std::string& yaml) {
  try {
    (void)parse_double_list(YAML::Load(yaml)["values"], "values");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(NumberList, DoublesReadBackBitForBit) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  std::vector<double> values{0.0, -0.0, 1.0, -1.5, 0.1, 1e-310, std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::min(), 0.86463844797178124};
  for (int i = 0; i < 2000; ++i) values.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  const std::vector<double> back = parse_double_list(written(format_number_list(values)), "values");
  ASSERT_EQ(back.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(back[i], values[i]) << "index " << i;
    EXPECT_EQ(std::signbit(back[i]), std::signbit(values[i])) << "index " << i;
  }
}

TEST(NumberList, IntegersReadBack) {
  const std::vector<std::int64_t> values{1, 2, 4, 8, 16, 24, 4096, 1LL << 40, -3};
  EXPECT_EQ(parse_int_list(written(format_number_list(values)), "values"), values);
  EXPECT_EQ(format_number_list(std::vector<std::int32_t>{27, 12, 0}), "27 12 0");
}

TEST(NumberList, AcceptsOrdinaryYamlSequencesAndLooseSpacing) {
  const std::vector<double> expected{1.0, 2.5, -3e-4, 7.0};
  EXPECT_EQ(parse_double_list(YAML::Load("values: [1, 2.5, -3e-4, +7]")["values"], "values"), expected);
  EXPECT_EQ(parse_double_list(YAML::Load("values: '  1  2.5\t-3e-4 +7 '")["values"], "values"), expected);
  EXPECT_TRUE(parse_double_list(YAML::Load("values: ''")["values"], "values").empty());
}

TEST(NumberList, BadEntriesNameTheKeyIndexAndToken) {
  EXPECT_NE(error_of("values: '1 2 abc 4'").find("values[2]: 'abc' is not a number"), std::string::npos);
  EXPECT_NE(error_of("values: [1, x]").find("values[1]: 'x'"), std::string::npos);
  EXPECT_NE(error_of("values: '1.5e'").find("values[0]"), std::string::npos);
  EXPECT_NE(error_of("values: [1, [2]]").find("values[1]"), std::string::npos);
  EXPECT_NE(error_of("values: {a: 1}").find("values: expected a list of numbers"), std::string::npos);
  EXPECT_NE(error_of("other: 1").find("values: missing"), std::string::npos);
  EXPECT_NE(error_of("values: '1 +-5'").find("values[1]: '+-5' is not a number"), std::string::npos);
  EXPECT_NE(error_of("values: '1e400'").find("values[0]: '1e400' is out of range"), std::string::npos);
  EXPECT_NE(error_of("values: [.inf]").find("values[0]"), std::string::npos);
  try {
    (void)parse_int_list(YAML::Load("m: '1 2.5'")["m"], "m");
    FAIL() << "a fraction was accepted as an integer";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("m[1]: '2.5' is not an integer"), std::string::npos) << e.what();
  }
}
