#pragma once
// Physical quantities in configs carry their unit ("5us", "3.35TB/s", "80GiB", "989TFLOPS", "8/s").
// Internally everything is SI base units as double: seconds, bytes, bytes/s, FLOP/s, 1/s.
#include <optional>
#include <string>
#include <string_view>

namespace ks::config {

enum class Dim {
  None,       // plain number, no unit allowed ("0.9")
  Time,       // s, ms, us, ns, ps (also "µs")                     -> seconds
  Bytes,      // B, kB/KB, MB, GB, TB, KiB, MiB, GiB, TiB             -> bytes
  Bandwidth,  // B/s with the byte prefixes above: "3.35TB/s", "600GiB/s" -> bytes/s
  FlopRate,   // FLOPS with k/M/G/T/P prefixes: "989TFLOPS" (also "TFLOP/s") -> FLOP/s
  Rate,       // events per second: "8/s", "480/min", "2/ms"          -> 1/s
  Frequency,  // Hz, kHz, MHz, GHz                                     -> Hz
};

// "time", "bytes", "bandwidth", ... for messages and `describe`.
std::string_view dim_name(Dim dim);
// An example literal for messages: Time -> "5us", Bandwidth -> "3.35TB/s", ...
std::string_view dim_example(Dim dim);
// The dimension with an article for messages: "a time", "a size in bytes", "a bandwidth", ...
std::string_view dim_noun(Dim dim);

// Parses text as a quantity of the given dimension. Decimal prefixes are powers of 1000, binary
// (Ki, Mi, Gi, Ti) powers of 1024. Whitespace between number and unit is allowed. A bare number is
// accepted only for Dim::None. Rejects NaN/inf, empty text, unknown units and units of another
// dimension. Returns nullopt on failure and fills *why with what was expected, e.g.
// "expected a bandwidth such as '3.35TB/s', got '3.35TB'".
std::optional<double> parse_quantity(std::string_view text, Dim dim, std::string* why = nullptr);

// Shortest readable form for output (resolved configs, `describe`): 3.35e12 Bandwidth -> "3.35TB/s",
// 5e-6 Time -> "5us", 85899345920 Bytes -> "80GiB" (binary prefix when exact, else decimal).
// parse_quantity(format_quantity(x, d), d) must equal x to within 1e-12 relative.
std::string format_quantity(double value, Dim dim);

}  // namespace ks::config
