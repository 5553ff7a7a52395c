#pragma once
// A Chrome / Perfetto trace-event timeline ("traceEvents" JSON, open it in ui.perfetto.dev or
// chrome://tracing). Modules feed it through a few hooks (spans, kernels, counters, request spans);
// it owns all the JSON. Pure C++ (no SystemC): times are integer picoseconds, the simulation's
// resolution, printed as exact microseconds so the file is byte-identical run to run.
//
// Bounded: at most `limit` events are kept (metadata naming tracks does not count); later events
// are dropped and counted by kind, and the file says so. A quarter of the limit is kept for request
// spans (async spans): other events stop at the other three quarters, so a long run's requests stay
// whole. Kernels are recorded one event each for the first `kernel_steps` engine steps, then folded
// into one event per step and track; link transfers (many per collective) one each for the first
// `transfer_steps` steps, then one event per step and link (count and bytes), so a long run stays
// readable and small.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ks::util {

struct TraceOptions {
  std::uint64_t limit = 200000;     // events kept (0: none)
  std::uint64_t kernel_steps = 20;  // steps with one event per kernel; later steps: one per step
  std::uint64_t transfer_steps = 2;  // steps with one event per link transfer; later: one per step and link
};

class TraceRecorder {
 public:
  using Ps = std::uint64_t;  // picoseconds

  explicit TraceRecorder(TraceOptions options = {});

  // The track `thread` inside the group `process` (created on first use, in call order, which
  // also fixes the display order). Returns a handle for the other calls.
  int track(const std::string& process, const std::string& thread);

  // Whether kernels (and host phases) of engine step `step` get their own events.
  bool detailed(std::uint64_t step) const { return step < options_.kernel_steps; }

  // A complete ("X") event; `args` is a JSON object text such as {"kernels":12} or empty.
  void span(int track, std::string_view name, std::string_view category, Ps start, Ps end,
            std::string_view args = {});
  // A kernel on a stream track: its own event in detailed steps, else merged into one
  // "step N" event per track covering the step's first start to last finish. `args` (JSON object
  // text, detailed steps only) defaults to {"step":N}.
  void kernel(int track, std::uint64_t step, std::string_view name, std::string_view category, Ps start, Ps end,
              std::string_view args = {});
  // A link transfer on a link's track: its own event in the first `transfer_steps` steps, else
  // merged into one "step N" event per link (args: transfers, bytes), like kernels.
  void transfer(int track, std::uint64_t step, Ps start, Ps end, double bytes);
  // A counter ("C") sample on the track's process: one series per value name.
  void counter(int track, std::string_view name, Ps at, const std::vector<std::pair<std::string, double>>& values);
  // An asynchronous span ("b"/"e" with an id), e.g. a request, with consecutive phases nested in
  // it. Written in nesting order, all or nothing (an unmatched "b" would confuse viewers).
  struct Phase {
    std::string name;
    Ps start = 0, end = 0;
  };
  void async_span(int track, std::string_view name, std::string_view category, std::uint64_t id, Ps start, Ps end,
                  std::string_view args = {}, const std::vector<Phase>& phases = {});

  std::uint64_t events() const { return events_; }
  std::uint64_t dropped() const { return dropped_; }
  bool truncated() const { return dropped_ > 0; }
  // What was dropped and how to keep it: "39955 events dropped (30000 link transfers, 9955 kernel
  // and host spans); raise --trace-limit to at least 239955 to keep them all". "" when nothing was.
  std::string truncation_note() const;

  // The whole document. Flushes merged steps first, so call it once, after the run.
  std::string json();

 private:
  struct Track {
    int pid = 0, tid = 0;
  };
  struct FoldedStep {  // kernels (or link transfers) of one step on one track, merged
    bool open = false;
    bool transfers = false;
    std::uint64_t step = 0, kernels = 0;
    Ps start = 0, end = 0;
    double bytes = 0;
    std::string category;
  };
  enum Kind { kSpan, kTransfer, kCounter, kRequest, kKinds };

  bool admit(Kind kind);  // counts the event; false once its budget is spent
  void add_span(Kind kind, int track, std::string_view name, std::string_view category, Ps start, Ps end,
                std::string_view args);
  void fold(int track, bool transfers, std::uint64_t step, std::string_view category, Ps start, Ps end, double bytes);
  void flush(int track);
  void head(char phase, int track, std::string_view name, std::string_view category, Ps ts);

  TraceOptions options_;
  std::map<std::string, int> pids_;
  std::map<std::pair<int, std::string>, int> track_ids_;
  std::vector<Track> tracks_;
  std::vector<FoldedStep> folded_;
  std::string metadata_, body_;
  std::uint64_t events_ = 0, dropped_ = 0, other_events_ = 0;
  std::uint64_t dropped_by_kind_[kKinds] = {};
};

}  // namespace ks::util
