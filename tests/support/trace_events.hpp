#pragma once
// Test helpers: reading a --trace file (Chrome / Perfetto JSON).
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ks::test_support {

// The trace's events of one phase type ("X", "M", ...).
inline std::vector<nlohmann::json> trace_events(const nlohmann::json& doc, const std::string& ph) {
  std::vector<nlohmann::json> out;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

// pid/tid of the track named `thread` (thread_name metadata); {-1, -1} when absent.
inline std::pair<int, int> trace_track(const nlohmann::json& doc, const std::string& thread_prefix) {
  for (const auto& m : trace_events(doc, "M"))
    if (m["name"] == "thread_name" && m["args"]["name"].get<std::string>().rfind(thread_prefix, 0) == 0)
      return {m["pid"].get<int>(), m["tid"].get<int>()};
  return {-1, -1};
}

}  // namespace ks::test_support
