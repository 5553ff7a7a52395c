#include "base/config/units.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace ks::config {
namespace {

double parse(const std::string& text, Dim dim) {
  std::string why;
  std::optional<double> value = parse_quantity(text, dim, &why);
  EXPECT_TRUE(value.has_value()) << text << ": " << why;
  return value.value_or(std::nan(""));
}

// The message for a rejected text (empty if it was accepted).
std::string rejection(const std::string& text, Dim dim) {
  std::string why;
  std::optional<double> value = parse_quantity(text, dim, &why);
  EXPECT_FALSE(value.has_value()) << "'" << text << "' was accepted as " << value.value_or(0);
  return why;
}

TEST(config_units, Time) {
  EXPECT_DOUBLE_EQ(parse("2s", Dim::Time), 2.0);
  EXPECT_DOUBLE_EQ(parse("1.5 ms", Dim::Time), 0.0015);
  EXPECT_DOUBLE_EQ(parse("5us", Dim::Time), 0.000005);
  EXPECT_DOUBLE_EQ(parse("4\u00b5s", Dim::Time), 0.000004);  // micro sign
  EXPECT_DOUBLE_EQ(parse("4\u03bcs", Dim::Time), 0.000004);  // Greek small mu
  EXPECT_DOUBLE_EQ(parse("3ns", Dim::Time), 0.000000003);
  EXPECT_DOUBLE_EQ(parse("7ps", Dim::Time), 0.000000000007);
}

TEST(config_units, DecimalPrefixesAreExact) {
  // The prefix shifts the decimal exponent, so the result is the double nearest the true value.
  EXPECT_EQ(parse("3.35TB/s", Dim::Bandwidth), 3.35e12);
  EXPECT_EQ(parse("5us", Dim::Time), 5e-6);
  EXPECT_EQ(parse("1.98GHz", Dim::Frequency), 1.98e9);
  EXPECT_EQ(parse("0.1ms", Dim::Time), 1e-4);
}

TEST(config_units, BytesDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(parse("512B", Dim::Bytes), 512.0);
  EXPECT_DOUBLE_EQ(parse("1kB", Dim::Bytes), 1000.0);
  EXPECT_DOUBLE_EQ(parse("1KB", Dim::Bytes), 1000.0);
  EXPECT_DOUBLE_EQ(parse("1KiB", Dim::Bytes), 1024.0);
  EXPECT_DOUBLE_EQ(parse("2MB", Dim::Bytes), 2000000.0);
  EXPECT_DOUBLE_EQ(parse("2MiB", Dim::Bytes), 2.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse("40GB", Dim::Bytes), 40000000000.0);
  EXPECT_DOUBLE_EQ(parse("80GiB", Dim::Bytes), 85899345920.0);  // 80 * 2^30
  EXPECT_DOUBLE_EQ(parse("1TB", Dim::Bytes), 1000000000000.0);
  EXPECT_DOUBLE_EQ(parse("1TiB", Dim::Bytes), 1099511627776.0);  // 2^40
}

TEST(config_units, Bandwidth) {
  EXPECT_DOUBLE_EQ(parse("3.35TB/s", Dim::Bandwidth), 3350000000000.0);
  EXPECT_DOUBLE_EQ(parse("600GiB/s", Dim::Bandwidth), 600.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse("900 GB/s", Dim::Bandwidth), 900000000000.0);
  EXPECT_DOUBLE_EQ(parse("64kB/s", Dim::Bandwidth), 64000.0);
  EXPECT_DOUBLE_EQ(parse("10B/s", Dim::Bandwidth), 10.0);
}

TEST(config_units, FlopRate) {
  EXPECT_DOUBLE_EQ(parse("989TFLOPS", Dim::FlopRate), 989000000000000.0);
  EXPECT_DOUBLE_EQ(parse("989 TFLOP/s", Dim::FlopRate), 989000000000000.0);
  EXPECT_DOUBLE_EQ(parse("1.5PFLOPS", Dim::FlopRate), 1500000000000000.0);
  EXPECT_DOUBLE_EQ(parse("312GFLOPS", Dim::FlopRate), 312000000000.0);
  EXPECT_DOUBLE_EQ(parse("5MFLOPS", Dim::FlopRate), 5000000.0);
  EXPECT_DOUBLE_EQ(parse("2kFLOPS", Dim::FlopRate), 2000.0);
  EXPECT_DOUBLE_EQ(parse("42FLOPS", Dim::FlopRate), 42.0);
}

TEST(config_units, Rate) {
  EXPECT_DOUBLE_EQ(parse("8/s", Dim::Rate), 8.0);
  EXPECT_DOUBLE_EQ(parse("480/min", Dim::Rate), 8.0);
  EXPECT_DOUBLE_EQ(parse("2/ms", Dim::Rate), 2000.0);
  EXPECT_DOUBLE_EQ(parse("7200/h", Dim::Rate), 2.0);
  EXPECT_DOUBLE_EQ(parse("0.5 /s", Dim::Rate), 0.5);
}

TEST(config_units, Frequency) {
  EXPECT_DOUBLE_EQ(parse("1.98GHz", Dim::Frequency), 1980000000.0);
  EXPECT_DOUBLE_EQ(parse("100MHz", Dim::Frequency), 100000000.0);
  EXPECT_DOUBLE_EQ(parse("50 kHz", Dim::Frequency), 50000.0);
  EXPECT_DOUBLE_EQ(parse("60Hz", Dim::Frequency), 60.0);
}

TEST(config_units, PlainNumbers) {
  EXPECT_DOUBLE_EQ(parse("0.9", Dim::None), 0.9);
  EXPECT_DOUBLE_EQ(parse("1e-3", Dim::None), 0.001);
  EXPECT_DOUBLE_EQ(parse(" 3 ", Dim::None), 3.0);
  EXPECT_DOUBLE_EQ(parse(".5", Dim::None), 0.5);
}

TEST(config_units, SignsAndExponents) {
  EXPECT_DOUBLE_EQ(parse("-5us", Dim::Time), -0.000005);
  EXPECT_DOUBLE_EQ(parse("+5us", Dim::Time), 0.000005);
  EXPECT_DOUBLE_EQ(parse("-2.5", Dim::None), -2.5);
  EXPECT_DOUBLE_EQ(parse("1.5e3ms", Dim::Time), 1.5);
  EXPECT_DOUBLE_EQ(parse("2E+2GB", Dim::Bytes), 200000000000.0);
  EXPECT_DOUBLE_EQ(parse("4e-1KiB", Dim::Bytes), 409.6);
}

TEST(config_units, RejectsWrongDimensionWithExample) {
  EXPECT_EQ(rejection("3.35TB", Dim::Bandwidth)
                .rfind("expected a bandwidth such as '3.35TB/s', got '3.35TB'", 0),
            0u);
  EXPECT_NE(rejection("3.35TB", Dim::Bandwidth).find("size in bytes"), std::string::npos);
  EXPECT_NE(rejection("5us", Dim::Bytes).find("that is a time"), std::string::npos);
  EXPECT_NE(rejection("8/s", Dim::Frequency).find("'1.98GHz'"), std::string::npos);
  EXPECT_NE(rejection("1GHz", Dim::FlopRate).find("'989TFLOPS'"), std::string::npos);
}

TEST(config_units, RejectsBits) {
  EXPECT_NE(rejection("100Gb/s", Dim::Bandwidth).find("bits"), std::string::npos);
  EXPECT_NE(rejection("8Gb", Dim::Bytes).find("bits"), std::string::npos);
  EXPECT_NE(rejection("8Gbit", Dim::Bytes).find("bits"), std::string::npos);
}

TEST(config_units, BareNumberNeedsAUnitAndPlainNumberTakesNone) {
  EXPECT_NE(rejection("5", Dim::Time).find("a unit is required"), std::string::npos);
  EXPECT_NE(rejection("8", Dim::Rate).find("a unit is required"), std::string::npos);
  EXPECT_NE(rejection("0.9x", Dim::None).find("no unit allowed"), std::string::npos);
  EXPECT_NE(rejection("5us", Dim::None).find("no unit allowed"), std::string::npos);
}

TEST(config_units, RejectsMalformedText) {
  for (const char* text :
       {"", "   ", "us", "nan", "NaN us", "inf", "infs", "-inf us", "--5us", "+-5us", "5 5us",
        "5usx", "5US", "5Ms", "1e999s", "0x10s", "five us", "5e"}) {
    std::string why = rejection(text, Dim::Time);
    EXPECT_NE(why.find("expected a time such as '5us', got '" + std::string(text) + "'"),
              std::string::npos)
        << why;
  }
  EXPECT_NE(rejection("1e400", Dim::None).find("out of range"), std::string::npos);
}

TEST(config_units, WhyIsOptional) {
  EXPECT_FALSE(parse_quantity("bogus", Dim::Time).has_value());
  EXPECT_DOUBLE_EQ(parse_quantity("1s", Dim::Time).value(), 1.0);
}

TEST(config_units, FormatPicksReadableUnits) {
  EXPECT_EQ(format_quantity(3.35e12, Dim::Bandwidth), "3.35TB/s");
  EXPECT_EQ(format_quantity(600.0 * 1073741824.0, Dim::Bandwidth), "600GiB/s");
  EXPECT_EQ(format_quantity(5e-6, Dim::Time), "5us");
  EXPECT_EQ(format_quantity(1.5e-3, Dim::Time), "1.5ms");
  EXPECT_EQ(format_quantity(120.0, Dim::Time), "120s");
  EXPECT_EQ(format_quantity(0.5e-12, Dim::Time), "0.5ps");
  EXPECT_EQ(format_quantity(0.0, Dim::Time), "0s");
  EXPECT_EQ(format_quantity(85899345920.0, Dim::Bytes), "80GiB");
  EXPECT_EQ(format_quantity(1024.0, Dim::Bytes), "1KiB");
  EXPECT_EQ(format_quantity(1000.0 * 1048576.0, Dim::Bytes), "1000MiB");
  EXPECT_EQ(format_quantity(1e12, Dim::Bytes), "1TB");  // also a whole number of KiB: decimal wins
  EXPECT_EQ(format_quantity(1536.0, Dim::Bytes), "1.536kB");
  EXPECT_EQ(format_quantity(0.0, Dim::Bytes), "0B");
  EXPECT_EQ(format_quantity(9.89e14, Dim::FlopRate), "989TFLOPS");
  EXPECT_EQ(format_quantity(8.0, Dim::Rate), "8/s");
  EXPECT_EQ(format_quantity(1.98e9, Dim::Frequency), "1.98GHz");
  EXPECT_EQ(format_quantity(0.9, Dim::None), "0.9");
  EXPECT_EQ(format_quantity(-5e-6, Dim::Time), "-5us");
}

TEST(config_units, FormatRoundTrips) {
  const Dim dims[] = {Dim::None,     Dim::Time, Dim::Bytes,    Dim::Bandwidth,
                      Dim::FlopRate, Dim::Rate, Dim::Frequency};
  const double values[] = {1.0 / 3.0,       123456.789e3, 7.77e-7, 3.141592653589793e12,
                           1099511627777.0, 2.5e-14,      6.02e23, 1.0,
                           999.999999,      1e-300,       42.0,    0.1 + 0.2};
  for (Dim dim : dims) {
    for (double value : values) {
      for (double signed_value : {value, -value}) {
        std::string text = format_quantity(signed_value, dim);
        std::optional<double> back = parse_quantity(text, dim);
        ASSERT_TRUE(back.has_value()) << text;
        EXPECT_LE(std::fabs(*back - signed_value), 1e-12 * std::fabs(signed_value))
            << dim_name(dim) << " " << text;
      }
    }
  }
}

TEST(config_units, NamesAndExamplesParse) {
  for (Dim dim : {Dim::None, Dim::Time, Dim::Bytes, Dim::Bandwidth, Dim::FlopRate, Dim::Rate,
                  Dim::Frequency}) {
    EXPECT_FALSE(dim_name(dim).empty());
    EXPECT_FALSE(dim_noun(dim).empty());
    EXPECT_TRUE(parse_quantity(dim_example(dim), dim).has_value()) << dim_example(dim);
  }
  EXPECT_EQ(dim_name(Dim::Bandwidth), "bandwidth");
  EXPECT_EQ(dim_example(Dim::Time), "5us");
}

}  // namespace
}  // namespace ks::config
