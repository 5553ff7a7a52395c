#include "base/config/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>
#include <vector>

namespace ks::config {

namespace {

// value = number * 10^pow10 * mul / div. The decimal exponent is applied to the number's text
// before conversion, so "3.35TB/s" is exactly the double nearest 3.35e12; mul and div are exact.
struct Unit {
  std::string symbol;
  int pow10 = 0;
  double mul = 1.0;
  double div = 1.0;
  bool canonical = false;  // used by format_quantity; the others are accepted spellings
  bool binary = false;     // Ki, Mi, Gi, Ti
};

double scale_of(const Unit& unit) { return std::pow(10.0, unit.pow10) * unit.mul / unit.div; }

// Byte units with an optional suffix ("" for sizes, "/s" for bandwidths).
std::vector<Unit> byte_units(const std::string& suffix) {
  std::vector<Unit> units = {{"B", 0, 1, 1, true, false},   {"kB", 3, 1, 1, true, false},
                             {"KB", 3, 1, 1, false, false}, {"MB", 6, 1, 1, true, false},
                             {"GB", 9, 1, 1, true, false},  {"TB", 12, 1, 1, true, false}};
  const char* binary[] = {"KiB", "MiB", "GiB", "TiB"};
  for (int i = 0; i < 4; ++i)
    units.push_back({binary[i], 0, std::ldexp(1.0, 10 * (i + 1)), 1, true, true});
  for (Unit& unit : units) unit.symbol += suffix;
  return units;
}

std::vector<Unit> flop_units() {
  const std::pair<const char*, int> prefixes[] = {{"", 0},  {"k", 3},  {"M", 6},
                                                  {"G", 9}, {"T", 12}, {"P", 15}};
  const char* suffixes[] = {"FLOPS", "FLOP/s", "flops", "flop/s", "Flops"};
  std::vector<Unit> units;
  for (const auto& [prefix, pow10] : prefixes)
    for (const char* suffix : suffixes)
      units.push_back({std::string(prefix) + suffix, pow10, 1, 1, suffix == suffixes[0], false});
  return units;
}

const std::vector<Unit>& units_of(Dim dim) {
  static const std::vector<Unit> none;
  static const std::vector<Unit> time = {
      {"s", 0, 1, 1, true, false},         {"ms", -3, 1, 1, true, false},
      {"us", -6, 1, 1, true, false},       {"\u00b5s", -6, 1, 1, false, false},  // micro sign
      {"\u03bcs", -6, 1, 1, false, false},                                       // Greek mu
      {"ns", -9, 1, 1, true, false},       {"ps", -12, 1, 1, true, false}};
  static const std::vector<Unit> bytes = byte_units("");
  static const std::vector<Unit> bandwidth = byte_units("/s");
  static const std::vector<Unit> flops = flop_units();
  static const std::vector<Unit> rate = {{"/s", 0, 1, 1, true, false},
                                         {"/ms", 3, 1, 1, false, false},
                                         {"/us", 6, 1, 1, false, false},
                                         {"/min", 0, 1, 60, false, false},
                                         {"/h", 0, 1, 3600, false, false}};
  static const std::vector<Unit> frequency = {{"Hz", 0, 1, 1, true, false},
                                              {"kHz", 3, 1, 1, true, false},
                                              {"MHz", 6, 1, 1, true, false},
                                              {"GHz", 9, 1, 1, true, false}};
  switch (dim) {
    case Dim::None:
      return none;
    case Dim::Time:
      return time;
    case Dim::Bytes:
      return bytes;
    case Dim::Bandwidth:
      return bandwidth;
    case Dim::FlopRate:
      return flops;
    case Dim::Rate:
      return rate;
    case Dim::Frequency:
      return frequency;
  }
  return none;
}

const Unit* find_unit(Dim dim, std::string_view symbol) {
  for (const Unit& unit : units_of(dim))
    if (unit.symbol == symbol) return &unit;
  return nullptr;
}

std::string_view trim(std::string_view s) {
  const char* space = " \t\r\n";
  std::size_t begin = s.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(space) - begin + 1);
}

// Why a unit was not accepted, beyond "expected ... got ...".
std::string unit_hint(std::string_view unit, Dim dim) {
  if (dim == Dim::None) return " (no unit allowed)";
  if ((dim == Dim::Bytes || dim == Dim::Bandwidth) && unit.find('b') != std::string_view::npos &&
      unit.find('B') == std::string_view::npos)
    return " (lowercase 'b' means bits; write bytes with 'B')";
  for (Dim other :
       {Dim::Time, Dim::Bytes, Dim::Bandwidth, Dim::FlopRate, Dim::Rate, Dim::Frequency})
    if (other != dim && find_unit(other, unit))
      return " (that is " + std::string(dim_noun(other)) + ")";
  return " (unknown unit '" + std::string(unit) + "')";
}

// Converts number text (digits, '.', exponent; no sign) scaled by 10^pow10, rounding once.
std::optional<double> decimal_value(std::string_view number, int pow10) {
  std::string text(number);
  int exponent = 0;
  std::size_t e = text.find_first_of("eE");
  if (e != std::string::npos) {
    std::string_view exp_text = std::string_view(text).substr(e + 1);
    if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
    auto [end, ec] = std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
    if (ec != std::errc() || end != exp_text.data() + exp_text.size()) return std::nullopt;
    text.resize(e);
  }
  text += "e" + std::to_string(static_cast<long long>(exponent) + pow10);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

// The number text in the "%.*g" style with the given significant digits (locale independent).
std::string number_text(double value, int precision) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general, precision);
  return std::string(buf, result.ptr);
}

std::string shortest_text(double value) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, result.ptr);
}

// The shortest rendering in `unit` that parses back to exactly `value` (or 17 digits).
std::string render(double value, Dim dim, const Unit& unit) {
  double mantissa =
      unit.pow10 < 0 ? value * std::pow(10.0, -unit.pow10) : value / std::pow(10.0, unit.pow10);
  mantissa = mantissa * unit.div / unit.mul;
  // Start with enough digits for the integer part so that 1000 prints as "1000", not "1e+03".
  int digits =
      mantissa == 0 ? 1 : static_cast<int>(std::floor(std::log10(std::fabs(mantissa)))) + 1;
  std::string text;
  for (int precision = std::max(1, std::min(digits, 17)); precision <= 17; ++precision) {
    text = number_text(mantissa, precision) + unit.symbol;
    if (parse_quantity(text, dim) == value) break;
  }
  return text;
}

// The canonical unit with the largest scale not above |value| (the smallest unit for tiny
// values). With `binary`, the candidates are the binary prefixes and the unprefixed unit.
const Unit* pick_unit(double value, Dim dim, bool binary) {
  const Unit* best = nullptr;
  const Unit* smallest = nullptr;
  for (const Unit& unit : units_of(dim)) {
    double scale = scale_of(unit);
    if (!unit.canonical || (unit.binary != binary && !(binary && scale == 1.0))) continue;
    if (value == 0 && scale == 1.0) return &unit;
    if (!smallest || scale < scale_of(*smallest)) smallest = &unit;
    if (std::fabs(value) >= scale && (!best || scale > scale_of(*best))) best = &unit;
  }
  return best ? best : smallest;
}

bool is_integral(double x) { return std::isfinite(x) && x == std::floor(x); }

}  // namespace

std::string_view dim_name(Dim dim) {
  switch (dim) {
    case Dim::None:
      return "number";
    case Dim::Time:
      return "time";
    case Dim::Bytes:
      return "bytes";
    case Dim::Bandwidth:
      return "bandwidth";
    case Dim::FlopRate:
      return "FLOP rate";
    case Dim::Rate:
      return "rate";
    case Dim::Frequency:
      return "frequency";
  }
  return "unknown";
}

std::string_view dim_example(Dim dim) {
  switch (dim) {
    case Dim::None:
      return "0.9";
    case Dim::Time:
      return "5us";
    case Dim::Bytes:
      return "80GiB";
    case Dim::Bandwidth:
      return "3.35TB/s";
    case Dim::FlopRate:
      return "989TFLOPS";
    case Dim::Rate:
      return "8/s";
    case Dim::Frequency:
      return "1.98GHz";
  }
  return "";
}

std::string_view dim_noun(Dim dim) {
  switch (dim) {
    case Dim::None:
      return "a plain number";
    case Dim::Time:
      return "a time";
    case Dim::Bytes:
      return "a size in bytes";
    case Dim::Bandwidth:
      return "a bandwidth";
    case Dim::FlopRate:
      return "a FLOP rate";
    case Dim::Rate:
      return "a rate";
    case Dim::Frequency:
      return "a frequency";
  }
  return "a value";
}

std::optional<double> parse_quantity(std::string_view text, Dim dim, std::string* why) {
  auto fail = [&](const std::string& hint) -> std::optional<double> {
    if (why)
      *why = "expected " + std::string(dim_noun(dim)) + " such as '" +
             std::string(dim_example(dim)) + "', got '" + std::string(text) + "'" + hint;
    return std::nullopt;
  };
  std::string_view s = trim(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  // Requiring a digit or '.' first also keeps out "inf", "nan" and a second sign.
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '.'))
    return fail("");
  double probe = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), probe);
  if (ec == std::errc::result_out_of_range) return fail(" (out of range)");
  if (ec != std::errc()) return fail("");
  std::string_view number = s.substr(0, end - s.data());
  std::string_view symbol = trim(s.substr(number.size()));

  const Unit* unit = nullptr;
  if (!symbol.empty()) {
    unit = find_unit(dim, symbol);
    if (!unit) return fail(unit_hint(symbol, dim));
  } else if (dim != Dim::None) {
    return fail(" (a unit is required)");
  }
  std::optional<double> value = decimal_value(number, unit ? unit->pow10 : 0);
  if (!value) return fail(" (out of range)");
  double result = unit ? *value * unit->mul / unit->div : *value;
  if (!std::isfinite(result)) return fail(" (out of range)");
  return negative ? -result : result;
}

std::string format_quantity(double value, Dim dim) {
  if (dim == Dim::None || !std::isfinite(value)) return shortest_text(value);
  const Unit* unit = pick_unit(value, dim, false);
  if (dim == Dim::Bytes || dim == Dim::Bandwidth) {
    // Binary prefix when it gives a whole number and the decimal one does not: 80GiB, but 1TB.
    const Unit* binary = pick_unit(value, dim, true);
    if (is_integral(value / scale_of(*binary)) && !is_integral(value / scale_of(*unit)))
      unit = binary;
  }
  return render(value, dim, *unit);
}

}  // namespace ks::config
