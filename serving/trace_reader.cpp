#include "serving/trace_reader.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace ks::serving {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.push_back(cell), cell.clear();
    else if (c != '\r') cell += c;
  }
  out.push_back(cell);
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

std::int64_t positive(double v, const std::string& what) {
  if (!(v >= 1)) throw std::invalid_argument(what + " must be >= 1, got " + std::to_string(v));
  return static_cast<std::int64_t>(v);
}

}  // namespace

double parse_timestamp(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double s = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%d %d:%d:%lf", &y, &mo, &d, &h, &mi, &s) != 6 &&
      std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%lf", &y, &mo, &d, &h, &mi, &s) != 6)
    throw std::invalid_argument("expected a timestamp like '2023-11-16 18:15:46.68', got '" + text + "'");
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
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the trace file");
  std::vector<TraceRow> rows;
  std::string line;
  int line_no = 0;
  auto fail = [&](const std::string& what) { return std::runtime_error(path + ":" + std::to_string(line_no) + ": " + what); };

  if (format == TraceFormat::Auto) {
    const std::string ext = std::filesystem::path(path).extension().string();
    format = (ext == ".jsonl" || ext == ".json") ? TraceFormat::Jsonl : TraceFormat::Vidur;  // CSVs: by header
  }
  if (format == TraceFormat::Jsonl) {
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        const auto j = nlohmann::json::parse(line);
        TraceRow row;
        for (const char* key : {"arrival_s", "arrival", "timestamp"})
          if (j.contains(key)) row.arrival_s = j.at(key).get<double>();
        const auto& prompt = j.contains("prompt_tokens") ? j.at("prompt_tokens")
                                                          : j.contains("prompt_len") ? j.at("prompt_len") : j.at("prompt_token_ids");
        if (prompt.is_array()) {
          auto ids = std::make_shared<std::vector<std::int32_t>>(prompt.get<std::vector<std::int32_t>>());
          row.spec.prompt_tokens = positive(static_cast<double>(ids->size()), "the prompt length");
          row.spec.prompt_ids = ids;
        } else {
          row.spec.prompt_tokens = positive(prompt.get<double>(), "prompt_tokens");
        }
        row.spec.output_tokens = positive((j.contains("output_tokens") ? j.at("output_tokens") : j.at("output_len")).get<double>(), "output_tokens");
        if (j.contains("prefix_group")) {
          row.spec.prefix_group = j.at("prefix_group").get<std::uint64_t>() + 1;  // 0 means none
          row.spec.group_tokens = j.contains("prefix_tokens") ? j.at("prefix_tokens").get<std::int64_t>()
                                                              : row.spec.prompt_tokens + row.spec.output_tokens;
        }
        rows.push_back(std::move(row));
      } catch (const nlohmann::json::exception& e) {
        throw fail(std::string("bad JSONL request (need prompt_tokens or prompt_len, output_tokens; optional "
                               "arrival_s, prefix_group, prefix_tokens): ") + e.what());
      } catch (const std::invalid_argument& e) {
        throw fail(e.what());
      }
    }
  } else {
    if (!std::getline(in, line)) throw std::runtime_error(path + ": empty trace file");
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
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const auto cells = split_csv(line);
      if (static_cast<int>(cells.size()) <= std::max({t, p, o})) throw fail("too few columns");
      try {
        TraceRow row;
        if (t >= 0) {
          const double at = azure ? parse_timestamp(cells[static_cast<std::size_t>(t)]) : std::stod(cells[static_cast<std::size_t>(t)]);
          if (rows.empty()) first = at;
          row.arrival_s = at - first;
          if (!rows.empty() && *row.arrival_s < *rows.back().arrival_s) throw std::invalid_argument("arrival times go backwards");
        }
        row.spec.prompt_tokens = positive(std::stod(cells[static_cast<std::size_t>(p)]), "the prompt length");
        row.spec.output_tokens = positive(std::stod(cells[static_cast<std::size_t>(o)]), "the output length");
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
