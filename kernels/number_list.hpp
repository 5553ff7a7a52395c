// Number lists in calibration files, written as one space-separated YAML scalar.
//
// A calibration holds ~10^5 numbers (tree thresholds and leaves, measured deviations). As YAML
// sequences each number is a node and yaml-cpp needs ~0.5 s to load the file; as one scalar per
// list it needs ~0.1 s. Doubles are written in their shortest exact form, so a file loads back to
// the very model that wrote it. Readers also take an ordinary YAML sequence (older and
// hand-written files).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace ks::kernels {

std::string format_number_list(const std::vector<double>& values);
std::string format_number_list(const std::vector<std::int64_t>& values);
std::string format_number_list(const std::vector<std::int32_t>& values);

// `where` names the key in errors: "<where>[<index>]: '<token>' is not a number" (or "is out of
// range"). Numbers are decimal as std::from_chars reads them, with an optional '+': YAML's .inf
// and .nan, hex and octal are rejected (a calibration never holds them).
std::vector<double> parse_double_list(const YAML::Node& node, const std::string& where);
std::vector<std::int64_t> parse_int_list(const YAML::Node& node, const std::string& where);

}  // namespace ks::kernels
