// Fuzz target: the request trace readers (Azure CSV, Vidur CSV, JSONL). Bad input must end in
// std::runtime_error naming the line; every row accepted must be in range.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "serving/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using ks::serving::TraceFormat;
  for (TraceFormat format : {TraceFormat::Azure, TraceFormat::Vidur, TraceFormat::Jsonl}) {
    try {
      for (const auto& row : ks::serving::parse_trace(text, "fuzz", format)) {
        if (row.spec.prompt_tokens < 1 || row.spec.output_tokens < 1) std::abort();
        if (row.arrival_s && !std::isfinite(*row.arrival_s)) std::abort();
      }
    } catch (const std::runtime_error&) {
    }
  }
  return 0;
}
