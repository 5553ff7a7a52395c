#include "base/util/csv.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ks::kernels {

CsvTable CsvTable::read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CsvError(path + ": cannot read file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

CsvTable CsvTable::parse(const std::string& text, const std::string& origin) {
  CsvTable t;
  t.origin_ = origin;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_started = false;
  std::size_t line = 1, record_line = 1;

  auto end_record = [&] {
    record.push_back(field);
    field.clear();
    field_started = false;
    const bool blank = record.size() == 1 && record[0].empty();
    if (!blank) {
      if (t.header_.empty()) {
        t.header_ = record;
        for (std::size_t i = 0; i < t.header_.size(); ++i) t.index_[t.header_[i]] = i;
      } else {
        if (record.size() != t.header_.size())
          throw CsvError(origin + ":" + std::to_string(record_line) + ": expected " +
                         std::to_string(t.header_.size()) + " columns, got " + std::to_string(record.size()));
        t.rows_.push_back(record);
        t.lines_.push_back(record_line);
      }
    }
    record.clear();
  };

  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = field_started = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      end_record();
      record_line = ++line;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted) throw CsvError(origin + ":" + std::to_string(record_line) + ": unbalanced quote");
  if (field_started || !record.empty()) end_record();
  if (t.header_.empty()) throw CsvError(origin + ": empty file (no header line)");
  return t;
}

void CsvTable::fail(std::size_t row, const std::string& column, const std::string& what) const {
  throw CsvError(origin_ + ":" + std::to_string(lines_.at(row)) + ": column '" + column + "': " + what);
}

const std::string& CsvTable::cell(std::size_t row, const std::string& column) const {
  auto it = index_.find(column);
  if (it == index_.end()) throw CsvError(origin_ + ": missing column '" + column + "'");
  return rows_.at(row)[it->second];
}

std::string CsvTable::optional_cell(std::size_t row, const std::string& column) const {
  return has_column(column) ? cell(row, column) : std::string();
}

std::optional<double> CsvTable::number(std::size_t row, const std::string& column) const {
  const std::string& text = cell(row, column);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v))
    fail(row, column, "expected a number, got '" + text + "'");
  return v;
}

double CsvTable::required_number(std::size_t row, const std::string& column) const {
  const auto v = number(row, column);
  if (!v) fail(row, column, "expected a number, got an empty cell");
  return *v;
}

}  // namespace ks::kernels
