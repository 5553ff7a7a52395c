#pragma once
// Test helper: a topology from inline YAML (`kind:` plus any preset parameter), as a scenario's
// hardware.topology section would build it. Tests that compute times by hand state the link
// parameters they use here instead of relying on the presets' fitted defaults.
#include <memory>
#include <string>

#include "hw/interconnect/topology_presets.hpp"
#include "base/config/document.hpp"

namespace ks::test_support {

inline std::unique_ptr<interconnect::Topology> topology_from_yaml(const std::string& yaml) {
  auto doc = config::Document::parse(yaml, "topo.yaml");
  const auto sec = doc.root();
  const auto& entry = interconnect::topology_registry().get(sec.kind(), sec.mark("kind"), "kind");
  return entry.make(sec.resolve(entry.schema));
}

// The plain α–β form: no NCCL protocol latency (Simple at full bandwidth always wins), no NVLS,
// a free local copy.
inline constexpr const char* kSingleProtocol =
    "nccl_latency_scale: 0\nnvls_efficiency: 0\nlocal_copy_bandwidth: 0GB/s\n";

}  // namespace ks::test_support
