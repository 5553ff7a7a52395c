#include "base/util/trace_recorder.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace ks::util {
namespace {

// Exact microseconds from picoseconds (no floating point: identical text on every run).
void append_us(std::string& out, TraceRecorder::Ps ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%06" PRIu64, ps / 1000000, ps % 1000000);
  out += buf;
}

void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

void append_number(std::string& out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  out += buf;
}

void append_metadata(std::string& out, const char* what, int pid, int tid, std::string_view key,
                     std::string_view text, int sort_index) {
  out += "{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"name\":\"" +
         what + "_name\",\"args\":{";
  append_string(out, key);
  out += ':';
  append_string(out, text);
  out += "}},\n{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"name\":\"" +
         what + "_sort_index\",\"args\":{\"sort_index\":" + std::to_string(sort_index) + "}},\n";
}

}  // namespace

TraceRecorder::TraceRecorder(TraceOptions options) : options_(options) {}

int TraceRecorder::track(const std::string& process, const std::string& thread) {
  auto [pit, new_process] = pids_.emplace(process, static_cast<int>(pids_.size()) + 1);
  const int pid = pit->second;
  if (new_process) append_metadata(metadata_, "process", pid, 0, "name", process, pid);
  auto [tit, new_track] = track_ids_.emplace(std::make_pair(pid, thread), static_cast<int>(tracks_.size()));
  if (new_track) {
    const int tid = static_cast<int>(tracks_.size()) + 1;
    tracks_.push_back({pid, tid});
    folded_.emplace_back();
    append_metadata(metadata_, "thread", pid, tid, "name", thread, tid);
  }
  return tit->second;
}

bool TraceRecorder::admit(Kind kind) {
  // Everything but request spans stops at three quarters of the limit: the rest is theirs.
  if (events_ >= options_.limit || other_events_ >= options_.limit - options_.limit / 4) {
    ++dropped_;
    ++dropped_by_kind_[kind];
    return false;
  }
  ++events_;
  ++other_events_;
  return true;
}

std::string TraceRecorder::truncation_note() const {
  if (dropped_ == 0) return "";
  static const char* const names[kKinds] = {"kernel and host spans", "link transfers", "counter samples",
                                            "request-span events"};
  std::string parts;
  for (int k = 0; k < kKinds; ++k) {
    if (dropped_by_kind_[k] == 0) continue;
    parts += (parts.empty() ? "" : ", ") + std::to_string(dropped_by_kind_[k]) + " " + names[k];
  }
  // Three quarters of the limit hold what is not a request span: enough room for all of it, and
  // for the request spans in the last quarter.
  const std::uint64_t other = other_events_ + dropped_ - dropped_by_kind_[kRequest];
  const std::uint64_t requests = events_ - other_events_ + dropped_by_kind_[kRequest];
  const std::uint64_t needed = std::max((other * 4 + 2) / 3, requests * 4);
  return std::to_string(dropped_) + " events dropped (" + parts + "); raise --trace-limit to at least " +
         std::to_string(std::max(needed, options_.limit + 1)) + " to keep them all" +
         (options_.kernel_steps > 0 ? ", or lower --trace-kernel-steps (" + std::to_string(options_.kernel_steps) +
                                          " steps with every kernel)"
                                    : std::string());
}

void TraceRecorder::head(char phase, int track, std::string_view name, std::string_view category, Ps ts) {
  const Track& t = tracks_.at(static_cast<std::size_t>(track));
  body_ += "{\"ph\":\"";
  body_ += phase;
  body_ += "\",\"pid\":" + std::to_string(t.pid) + ",\"tid\":" + std::to_string(t.tid) + ",\"name\":";
  append_string(body_, name);
  if (!category.empty()) {
    body_ += ",\"cat\":";
    append_string(body_, category);
  }
  body_ += ",\"ts\":";
  append_us(body_, ts);
}

void TraceRecorder::span(int track, std::string_view name, std::string_view category, Ps start, Ps end,
                         std::string_view args) {
  add_span(kSpan, track, name, category, start, end, args);
}

void TraceRecorder::add_span(Kind kind, int track, std::string_view name, std::string_view category, Ps start,
                             Ps end, std::string_view args) {
  if (!admit(kind)) return;
  head('X', track, name, category, start);
  body_ += ",\"dur\":";
  append_us(body_, end > start ? end - start : 0);
  if (!args.empty()) {
    body_ += ",\"args\":";
    body_ += args;
  }
  body_ += "},\n";
}

void TraceRecorder::kernel(int track, std::uint64_t step, std::string_view name, std::string_view category, Ps start,
                           Ps end, std::string_view args) {
  if (detailed(step)) {
    if (!args.empty()) span(track, name, category, start, end, args);
    else span(track, name, category, start, end, "{\"step\":" + std::to_string(step) + "}");
    return;
  }
  fold(track, false, step, category, start, end, 0);
}

void TraceRecorder::transfer(int track, std::uint64_t step, Ps start, Ps end, double bytes) {
  if (step < options_.transfer_steps) {
    char args[64];
    std::snprintf(args, sizeof args, "{\"step\":%llu,\"bytes\":%.0f}", static_cast<unsigned long long>(step), bytes);
    add_span(kTransfer, track, "transfer", "link", start, end, args);
    return;
  }
  fold(track, true, step, "link", start, end, bytes);
}

void TraceRecorder::fold(int track, bool transfers, std::uint64_t step, std::string_view category, Ps start, Ps end,
                         double bytes) {
  FoldedStep& f = folded_.at(static_cast<std::size_t>(track));
  if (f.open && f.step != step) flush(track);
  if (!f.open) {
    f = {true, transfers, step, 0, start, end, 0, std::string(category)};
  }
  ++f.kernels;
  f.bytes += bytes;
  f.start = std::min(f.start, start);
  f.end = std::max(f.end, end);
}

void TraceRecorder::flush(int track) {
  FoldedStep& f = folded_.at(static_cast<std::size_t>(track));
  if (!f.open) return;
  f.open = false;
  if (f.transfers) {
    char bytes[32];
    std::snprintf(bytes, sizeof bytes, "%.0f", f.bytes);
    add_span(kTransfer, track, "step " + std::to_string(f.step), f.category, f.start, f.end,
             "{\"step\":" + std::to_string(f.step) + ",\"transfers\":" + std::to_string(f.kernels) +
                 ",\"bytes\":" + bytes + "}");
    return;
  }
  span(track, "step " + std::to_string(f.step), f.category, f.start, f.end,
       "{\"step\":" + std::to_string(f.step) + ",\"kernels\":" + std::to_string(f.kernels) + "}");
}

void TraceRecorder::counter(int track, std::string_view name, Ps at,
                            const std::vector<std::pair<std::string, double>>& values) {
  if (!admit(kCounter)) return;
  const Track& t = tracks_.at(static_cast<std::size_t>(track));
  body_ += "{\"ph\":\"C\",\"pid\":" + std::to_string(t.pid) + ",\"name\":";
  append_string(body_, name);
  body_ += ",\"ts\":";
  append_us(body_, at);
  body_ += ",\"args\":{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) body_ += ',';
    append_string(body_, values[i].first);
    body_ += ':';
    append_number(body_, values[i].second);
  }
  body_ += "}},\n";
}

void TraceRecorder::async_span(int track, std::string_view name, std::string_view category, std::uint64_t id,
                               Ps start, Ps end, std::string_view args, const std::vector<Phase>& phases) {
  const std::uint64_t n = 2 * (1 + phases.size());
  if (events_ + n > options_.limit) {
    dropped_ += n;
    dropped_by_kind_[kRequest] += n;
    return;
  }
  events_ += n;
  const std::string id_text = ",\"id\":" + std::to_string(id) + "},\n";
  head('b', track, name, category, start);
  if (!args.empty()) {
    body_ += ",\"args\":";
    body_ += args;
  }
  body_ += id_text;
  for (const Phase& p : phases) {
    head('b', track, p.name, category, p.start);
    body_ += id_text;
    head('e', track, p.name, category, std::max(p.start, p.end));
    body_ += id_text;
  }
  head('e', track, name, category, std::max(start, end));
  body_ += id_text;
}

std::string TraceRecorder::json() {
  for (std::size_t t = 0; t < folded_.size(); ++t) flush(static_cast<int>(t));
  std::string out = "{\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"generator\":\"kernelsight\",\"trace_limit\":" +
                    std::to_string(options_.limit) + ",\"kernel_detail_steps\":" +
                    std::to_string(options_.kernel_steps) + ",\"events\":" + std::to_string(events_) +
                    ",\"dropped_events\":" + std::to_string(dropped_) +
                    ",\"truncated\":" + (truncated() ? "true" : "false") + ",\"dropped\":{\"spans\":" +
                    std::to_string(dropped_by_kind_[kSpan]) + ",\"link_transfers\":" +
                    std::to_string(dropped_by_kind_[kTransfer]) + ",\"counters\":" +
                    std::to_string(dropped_by_kind_[kCounter]) + ",\"request_spans\":" +
                    std::to_string(dropped_by_kind_[kRequest]) + "}},\n\"traceEvents\":[\n";
  out += metadata_;
  out += body_;
  if (truncated() && !tracks_.empty()) {  // a marker visible in the timeline itself
    out += "{\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":1,\"name\":";
    append_string(out, "trace truncated: " + truncation_note());
    out += ",\"ts\":0},\n";
  }
  if (out.size() >= 2 && out.compare(out.size() - 2, 2, ",\n") == 0) out.erase(out.size() - 2, 1);
  out += "]}\n";
  return out;
}

}  // namespace ks::util
