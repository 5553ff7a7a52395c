#pragma once
// A small CSV reader for measurement files (RFC 4180 quoting). Errors name the file, the line
// and the column, because users feed us files from their own machines.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace ks::kernels {

class CsvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CsvTable {
 public:
  // Throws CsvError for a missing file, an empty file, ragged rows or unbalanced quotes.
  static CsvTable read_file(const std::string& path);
  static CsvTable parse(const std::string& text, const std::string& origin);

  const std::string& origin() const { return origin_; }
  const std::vector<std::string>& header() const { return header_; }
  std::size_t rows() const { return rows_.size(); }
  bool has_column(const std::string& name) const { return index_.count(name) != 0; }

  // Cell text; throws CsvError when the column does not exist.
  const std::string& cell(std::size_t row, const std::string& column) const;
  // Cell text of an optional column: empty when the file has no such column.
  std::string optional_cell(std::size_t row, const std::string& column) const;
  // Numeric cell: nullopt when blank; CsvError "file:line: column 'x': expected a number, got 'y'".
  std::optional<double> number(std::size_t row, const std::string& column) const;
  double required_number(std::size_t row, const std::string& column) const;
  // The file line a data row came from (1-based, counting the header line).
  std::size_t line_of(std::size_t row) const { return lines_.at(row); }
  [[noreturn]] void fail(std::size_t row, const std::string& column, const std::string& what) const;

 private:
  std::string origin_;
  std::vector<std::string> header_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;
};

}  // namespace ks::kernels
