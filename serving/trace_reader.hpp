#pragma once
// Request traces from files: the Azure LLM inference trace CSV (TIMESTAMP,ContextTokens,
// GeneratedTokens), Vidur's processed traces (arrived_at,num_prefill_tokens,num_decode_tokens;
// or length-only files without arrived_at), and JSONL with one request per line.
#include <optional>
#include <string>
#include <vector>

#include "serving/workload.hpp"

namespace ks::serving {

struct TraceRow {
  std::optional<double> arrival_s;  // relative to the first row; nullopt: the file has no times
  RequestSpec spec;                 // arrival_s unused here
};

enum class TraceFormat { Auto, Azure, Vidur, Jsonl };

// Throws std::runtime_error "<path>:<line>: <what>" for unreadable files or malformed rows:
// token counts must be whole numbers from 1 to 1e9, arrival times finite and within 1e7 s.
std::vector<TraceRow> read_trace(const std::string& path, TraceFormat format);
// The same from text (`path` names it in messages); Auto is Vidur/Azure by header.
std::vector<TraceRow> parse_trace(const std::string& text, const std::string& path, TraceFormat format);

// "%.17g": a number as it appears in messages.
std::string number_text(double v);

// "2023-11-16 18:15:46.6805900" -> seconds since 1970-01-01 (UTC, no leap seconds).
double parse_timestamp(const std::string& text);

// A data file named in a scenario: relative paths are tried next to the scenario file first
// (`origin` of the value's mark), then from the working directory.
std::string resolve_data_path(const std::string& path, const std::string& origin);

}  // namespace ks::serving
