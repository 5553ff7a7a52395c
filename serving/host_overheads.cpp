// The built-in kinds of engine overheads: `fixed_overhead` (the same cost every step) and `fitted`
// (per-step phases fitted at start-up to measured overheads, data/cpu_overheads/<measurements>.csv
// or the user's own CSV in that format).
#include "serving/host_overheads.hpp"

#include <filesystem>

#include "base/config/error.hpp"
#include "base/util/csv.hpp"
#include "base/util/data_dir.hpp"

namespace ks::serving {
namespace {

// A bare name is a shipped measurement set; anything that looks like a path is the user's file,
// relative to the scenario that names it.
std::string measurements_path(const config::Params& params) {
  const std::string value = params.string("measurements");
  const bool is_csv = value.size() > 4 && value.compare(value.size() - 4, 4, ".csv") == 0;
  const bool is_path = is_csv || value.find('/') != std::string::npos;
  if (!is_path) return kernels::data_dir() + "/cpu_overheads/" + value + ".csv";
  std::filesystem::path path(value);
  const config::SourceMark& mark = params.mark("measurements");
  if (path.is_relative() && mark.line > 0) path = std::filesystem::path(mark.origin).parent_path() / path;
  return path.string();
}

TpTerm parse_tp_term(const std::string& s) {
  if (s == "linear") return TpTerm::Linear;
  if (s == "log2") return TpTerm::Log2;
  return TpTerm::Distributed;
}

const bool registered_fixed = [] {
  config::Schema schema("Host CPU of a serving engine with fixed per-step and per-kernel costs.");
  schema
      .quantity("prepare_overhead", config::Dim::Time, std::string("500us"),
                "CPU time before a step's first launch: scheduling and input preparation", 0.0, false)
      .quantity("finish_overhead", config::Dim::Time, std::string("500us"),
                "CPU time after the GPU finishes a step: sampling, detokenisation, output processing",
                0.0, false);
  host_overheads_registry().add("fixed_overhead", {schema.doc(), schema, [](const config::Params& params) {
                                                     return std::make_unique<FixedHostOverheads>(
                                                         params.number("prepare_overhead"),
                                                         params.number("finish_overhead"));
                                                   }});
  return true;
}();

const bool registered_fitted = [] {
  config::Schema schema(
      "Host CPU whose per-step scheduling, input preparation, sampling and output processing times are "
      "a + b*sequences + (c + d*sequences)*f(TP) per phase, fitted by least squares to measured CPU overheads.");
  schema
      .string("measurements", std::string("a100"),
              "measured overheads to fit: a100 | a40 (Vidur, vLLM-derived engine; data/cpu_overheads/) or "
              "a CSV path in that format")
      .choice("tp_term", {"distributed", "log2", "linear"}, std::string("distributed"),
              "how TP enters the fit: a constant once TP > 1 (workers to coordinate), log2(TP), or TP-1")
      .number("scale", 1.0, "multiplies the fitted times (a faster or slower host CPU)", 0.0);
  host_overheads_registry().add(
      "fitted", {schema.doc(), schema, [](const config::Params& params) {
                   HostOverheadModel model;
                   try {
                     model = fit_host_overheads(read_host_overheads(measurements_path(params)),
                                                parse_tp_term(params.string("tp_term")));
                   } catch (const std::exception& e) {  // CsvError, too few rows
                     throw config::ConfigError(params.mark("measurements"), "hardware.host.measurements", e.what());
                   }
                   return std::make_unique<FittedHostOverheads>(model, params.number("scale"));
                 }});
  return true;
}();

}  // namespace
}  // namespace ks::serving
