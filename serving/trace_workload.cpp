// Workload kind `trace`: replays a request trace (Azure LLM inference CSV, Vidur processed
// trace, or JSONL), optionally faster or slower, truncated by count or duration.
#include "base/config/error.hpp"
#include "serving/trace_reader.hpp"
#include "serving/workload.hpp"

namespace ks::serving {
namespace {

class TraceWorkload final : public Workload {
 public:
  explicit TraceWorkload(const WorkloadArgs& args) {
    const config::Params& p = args.params;
    const std::string fmt = p.string("format");
    const TraceFormat format = fmt == "azure" ? TraceFormat::Azure
                               : fmt == "vidur" ? TraceFormat::Vidur
                               : fmt == "jsonl" ? TraceFormat::Jsonl
                                                : TraceFormat::Auto;
    try {
      rows_ = read_trace(resolve_data_path(p.string("path"), p.mark("path").origin), format);
    } catch (const std::exception& e) {
      throw config::ConfigError(p.mark("path"), p.path() + ".path", e.what());
    }
    double last = 0;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      if (!rows_[i].arrival_s)
        throw config::ConfigError(p.mark("path"), p.path() + ".path",
                                  "the trace has no arrival times; sample its lengths with kind: synthetic, "
                                  "prompt_dist: trace, length_trace: <file>");
      if (*rows_[i].arrival_s < last)
        throw config::ConfigError(p.mark("path"), p.path() + ".path",
                                  "arrival times go backwards at request " + std::to_string(i));
      last = *rows_[i].arrival_s;
    }
    speedup_ = p.number("speedup");
    limit_ = p.integer("num_requests");
    duration_ = p.number("duration");
  }

  std::optional<RequestSpec> next() override {
    if (next_ >= rows_.size() || (limit_ > 0 && static_cast<std::int64_t>(next_) >= limit_)) return std::nullopt;
    RequestSpec spec = rows_[next_].spec;
    spec.arrival_s = *rows_[next_].arrival_s / speedup_;
    if (duration_ > 0 && spec.arrival_s > duration_) return std::nullopt;
    ++next_;
    return spec;
  }

 private:
  std::vector<TraceRow> rows_;
  std::size_t next_ = 0;
  double speedup_ = 1;
  std::int64_t limit_ = 0;
  double duration_ = 0;
};

const bool registered = [] {
  config::Schema schema("Replay of a request trace: Azure LLM inference CSV, Vidur processed trace, or JSONL.");
  schema.string("path", std::nullopt, "trace file (relative paths: next to the scenario, then the working directory)")
      .choice("format", {"auto", "azure", "vidur", "jsonl"}, std::string("auto"),
              "auto: .jsonl is JSONL; CSVs are told apart by their header")
      .number("speedup", 1.0, "divide arrival times by this (2 = twice the request rate)", 1e-6)
      .integer("num_requests", 0, "replay at most this many requests (0: all)", 0)
      .quantity("duration", config::Dim::Time, std::string("0s"), "replay requests arriving before this time (0s: all)",
                0.0, false);
  workload_registry().add("trace", {schema.doc(), schema, [](const WorkloadArgs& args) {
                                      return std::make_unique<TraceWorkload>(args);
                                    }});
  return true;
}();

}  // namespace
}  // namespace ks::serving
