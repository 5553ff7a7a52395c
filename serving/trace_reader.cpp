#include "serving/trace_reader.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace ks::serving {
namespace {

// Refills `out` (its strings keep their capacity: no allocation per row of a long trace).
void split_csv(const std::string& line, std::vector<std::string>& out) {
  std::size_t n = 0;
  auto next_cell = [&]() -> std::string& {
    if (n == out.size()) out.emplace_back();
    std::string& cell = out[n++];
    cell.clear();
    return cell;
  };
  std::string* cell = &next_cell();
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) cell = &next_cell();
    else if (c != '\r') *cell += c;
  }
  out.resize(n);
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  split_csv(line, out);
  return out;
}

int column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {  // H. Hinnant's algorithm
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// Bounds that keep every later computation exact: token counts far beyond any model's context,
// and arrival times inside SystemC's range (2^64 ps is about 213 days).
constexpr double kMaxTokens = 1e9;
constexpr double kMaxArrivalSeconds = 1e7;

// A whole number of tokens in [1, kMaxTokens]: "12abc", "1e300", "nan" and "inf" are errors.
std::int64_t token_count(double v, const std::string& what) {
  if (!(v >= 1 && v <= kMaxTokens) || v != std::floor(v))
    throw std::invalid_argument(what + ": expected a whole number of tokens from 1 to 1000000000, got " +
                                number_text(v));
  return static_cast<std::int64_t>(v);
}

// The whole cell as a number (std::stod would accept "12abc").
double cell_number(const std::string& cell, const std::string& what) {
  const char* begin = cell.c_str();
  // A plain decimal number is the whole cell: std::from_chars rounds it exactly as strtod does, in
  // a fraction of the instructions. Anything else (spaces, '+', hex, overflow, junk) goes to strtod.
  double parsed;
  const auto [stop, error] = std::from_chars(begin, begin + cell.size(), parsed);
  if (error == std::errc() && stop == begin + cell.size() && stop != begin) return parsed;
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  while (end && (*end == ' ' || *end == '\t')) ++end;
  if (end == begin || *end != '\0') throw std::invalid_argument(what + ": expected a number, got '" + cell + "'");
  return v;
}

double arrival_seconds(double v, const std::string& what) {
  if (!(std::isfinite(v) && std::fabs(v) <= kMaxArrivalSeconds))
    throw std::invalid_argument(what + ": expected a finite time within 1e7 s of the first request, got " +
                                number_text(v));
  return v;
}

// A JSON field as a number, naming the key when it is not one.
double json_number(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_number()) throw std::invalid_argument(std::string(key) + ": expected a number, got " + v.dump());
  return v.get<double>();
}

const char* first_key(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (j.contains(k)) return k;
  return nullptr;
}

TraceRow jsonl_row(const std::string& line) {
  const auto j = nlohmann::json::parse(line);
  if (!j.is_object()) throw std::invalid_argument("expected a JSON object per line, got " + j.dump().substr(0, 40));
  TraceRow row;
  if (const char* key = first_key(j, {"arrival_s", "arrival", "timestamp"}))
    row.arrival_s = arrival_seconds(json_number(j, key), key);
  const char* prompt_key = first_key(j, {"prompt_tokens", "prompt_len", "prompt_token_ids"});
  const char* output_key = first_key(j, {"output_tokens", "output_len"});
  if (!prompt_key || !output_key)
    throw std::invalid_argument("missing prompt_tokens (or prompt_len, prompt_token_ids) or output_tokens");
  const auto& prompt = j.at(prompt_key);
  if (prompt.is_array()) {
    auto ids = std::make_shared<std::vector<std::int32_t>>();
    for (const auto& id : prompt) {
      if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > INT32_MAX)
        throw std::invalid_argument(std::string(prompt_key) + ": expected token ids (integers from 0 to 2^31-1), got " +
                                    id.dump());
      ids->push_back(id.get<std::int32_t>());
    }
    row.spec.prompt_tokens = token_count(static_cast<double>(ids->size()), "the prompt length");
    row.spec.prompt_ids = ids;
  } else {
    row.spec.prompt_tokens = token_count(json_number(j, prompt_key), prompt_key);
  }
  row.spec.output_tokens = token_count(json_number(j, output_key), output_key);
  if (j.contains("prefix_group")) {
    const double group = json_number(j, "prefix_group");
    if (!(group >= 0 && group < 9e15) || group != std::floor(group))
      throw std::invalid_argument("prefix_group: expected a non-negative integer, got " + j.at("prefix_group").dump());
    row.spec.prefix_group = static_cast<std::uint64_t>(group) + 1;  // 0 means none
    row.spec.group_tokens = j.contains("prefix_tokens") ? token_count(json_number(j, "prefix_tokens"), "prefix_tokens")
                                                        : row.spec.prompt_tokens + row.spec.output_tokens;
  }
  return row;
}

}  // namespace

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

namespace {
}  // namespace

double parse_timestamp(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double s = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%d %d:%d:%lf", &y, &mo, &d, &h, &mi, &s) != 6 &&
      std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%lf", &y, &mo, &d, &h, &mi, &s) != 6)
    throw std::invalid_argument("expected a timestamp like '2023-11-16 18:15:46.68', got '" + text + "'");
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
      !(s >= 0 && s < 61))
    throw std::invalid_argument("timestamp out of range (year 1970-9999, month 1-12, day 1-31, hh:mm:ss): '" + text + "'");
  return static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400.0 +
         h * 3600.0 + mi * 60.0 + s;
}

std::string resolve_data_path(const std::string& path, const std::string& origin) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.is_relative() && !origin.empty() && fs::exists(fs::path(origin))) {
    const fs::path beside = fs::path(origin).parent_path() / p;
    if (fs::exists(beside)) return beside.string();
  }
  return path;
}

std::vector<TraceRow> read_trace(const std::string& path, TraceFormat format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the trace file");
  if (format == TraceFormat::Auto) {
    const std::string ext = std::filesystem::path(path).extension().string();
    format = (ext == ".jsonl" || ext == ".json") ? TraceFormat::Jsonl : TraceFormat::Vidur;  // CSVs: by header
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_trace(text.str(), path, format);
}

std::vector<TraceRow> parse_trace(const std::string& text, const std::string& path, TraceFormat format) {
  std::istringstream in(text);
  std::vector<TraceRow> rows;
  std::string line;
  int line_no = 0;
  auto fail = [&](const std::string& what) { return std::runtime_error(path + ":" + std::to_string(line_no) + ": " + what); };

  if (format == TraceFormat::Jsonl) {
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        rows.push_back(jsonl_row(line));
      } catch (const nlohmann::json::exception& e) {
        throw fail(std::string("bad JSONL request (need prompt_tokens or prompt_len, output_tokens; optional "
                               "arrival_s, prefix_group, prefix_tokens): ") + e.what());
      } catch (const std::invalid_argument& e) {
        throw fail(e.what());
      }
    }
  } else {
    if (!std::getline(in, line)) throw std::runtime_error(path + ": empty trace file (expected a header line)");
    line_no = 1;
    const auto header = split_csv(line);
    int t = -1, p = -1, o = -1;
    bool azure = false;
    if ((t = column(header, "TIMESTAMP")) >= 0 || format == TraceFormat::Azure) {
      azure = true;
      p = column(header, "ContextTokens");
      o = column(header, "GeneratedTokens");
    } else {
      t = column(header, "arrived_at");
      p = column(header, "num_prefill_tokens");
      o = column(header, "num_decode_tokens");
    }
    if (p < 0 || o < 0)
      throw fail("unrecognised trace header '" + line +
                 "' (expected TIMESTAMP,ContextTokens,GeneratedTokens or arrived_at,num_prefill_tokens,num_decode_tokens)");
    double first = 0;
    std::vector<std::string> cells;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      split_csv(line, cells);
      if (static_cast<int>(cells.size()) <= std::max({t, p, o})) throw fail("too few columns");
      try {
        TraceRow row;
        if (t >= 0) {
          const std::string& cell = cells[static_cast<std::size_t>(t)];
          const double at = azure ? parse_timestamp(cell) : cell_number(cell, header[static_cast<std::size_t>(t)]);
          if (rows.empty()) first = at;
          row.arrival_s = arrival_seconds(at - first, header[static_cast<std::size_t>(t)]);
          if (!rows.empty() && *row.arrival_s < *rows.back().arrival_s) throw std::invalid_argument("arrival times go backwards");
        }
        row.spec.prompt_tokens = token_count(cell_number(cells[static_cast<std::size_t>(p)], header[static_cast<std::size_t>(p)]),
                                             header[static_cast<std::size_t>(p)]);
        row.spec.output_tokens = token_count(cell_number(cells[static_cast<std::size_t>(o)], header[static_cast<std::size_t>(o)]),
                                             header[static_cast<std::size_t>(o)]);
        rows.push_back(std::move(row));
      } catch (const std::exception& e) {
        throw fail(e.what());
      }
    }
  }
  if (rows.empty()) throw std::runtime_error(path + ": the trace holds no requests");
  return rows;
}

}  // namespace ks::serving
