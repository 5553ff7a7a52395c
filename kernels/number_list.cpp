#include "kernels/number_list.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <stdexcept>
#include <system_error>

namespace ks::kernels {
namespace {

template <typename T>
std::string format_list(const std::vector<T>& values) {
  std::string out;
  out.reserve(values.size() * 12);
  char buf[32];
  for (const T v : values) {
    // Shortest representation that reads back to the same value.
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    if (ec != std::errc()) throw std::runtime_error("number list: cannot format a value");
    if (!out.empty()) out += ' ';
    out.append(buf, end);
  }
  return out;
}

[[noreturn]] void bad_token(const std::string& where, std::size_t index, std::string_view token, const char* expected) {
  throw std::runtime_error(where + "[" + std::to_string(index) + "]: '" + std::string(token) + "' is " + expected);
}

template <typename T>
std::vector<T> parse_list(const YAML::Node& node, const std::string& where, const char* expected) {
  std::vector<T> out;
  auto parse_one = [&](std::string_view token) {
    T v{};
    const char* first = token.data();
    const char* last = first + token.size();
    if (!token.empty() && *first == '+') {  // from_chars rejects a leading '+'; one sign only
      ++first;
      if (first != last && (*first == '+' || *first == '-')) bad_token(where, out.size(), token, expected);
    }
    const auto [end, ec] = std::from_chars(first, last, v);
    if (ec == std::errc::result_out_of_range) bad_token(where, out.size(), token, "out of range");
    if (ec != std::errc() || end != last) bad_token(where, out.size(), token, expected);
    out.push_back(v);
  };
  if (!node) throw std::runtime_error(where + ": missing (expected a list of numbers)");
  if (node.IsSequence()) {
    out.reserve(node.size());
    for (const YAML::Node& item : node) {
      if (!item.IsScalar()) bad_token(where, out.size(), "<not a scalar>", expected);
      parse_one(item.Scalar());
    }
    return out;
  }
  if (!node.IsScalar()) throw std::runtime_error(where + ": expected a list of numbers");
  const std::string& text = node.Scalar();
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\n' && text[j] != '\t') ++j;
    if (j > i) parse_one(std::string_view(text).substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

std::string format_number_list(const std::vector<double>& values) { return format_list(values); }
std::string format_number_list(const std::vector<std::int64_t>& values) { return format_list(values); }
std::string format_number_list(const std::vector<std::int32_t>& values) { return format_list(values); }

std::vector<double> parse_double_list(const YAML::Node& node, const std::string& where) {
  return parse_list<double>(node, where, "not a number");
}

std::vector<std::int64_t> parse_int_list(const YAML::Node& node, const std::string& where) {
  return parse_list<std::int64_t>(node, where, "not an integer");
}

}  // namespace ks::kernels
