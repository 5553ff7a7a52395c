#pragma once
// The interconnect as a TLM target. GPU groups (and co-simulated models) send `Collective` and
// `MemCopy` transactions; the fabric decomposes each into link transfers on its topology
// (FabricModel) so that overlapping collectives and copies contend for the links they share.
// Loosely timed and asynchronous like a kernel launch: a transaction starts at its issue time
// (sc_time_stamp() + delay), b_transport returns at once and fills `finish`.
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "hw/interconnect/fabric_model.hpp"
#include "proto/extensions.hpp"
#include "proto/protocol.hpp"
#include "base/util/trace_recorder.hpp"

namespace ks::hw {

class FabricModule : public sc_core::sc_module {
 public:
  // Any number of initiators may bind.
  tlm_utils::multi_passthrough_target_socket<FabricModule, proto::kBusWidth, proto::gpu_protocol_types> socket;

  FabricModule(const sc_core::sc_module_name& name, std::shared_ptr<const interconnect::Topology> topology);

  const interconnect::Topology& topology() const { return model_.topology(); }
  const interconnect::FabricModel& model() const { return model_; }
  // Before the run: a set of GPUs that will exchange traffic (FabricModel::declare_group).
  void declare_group(const std::vector<int>& gpus) { model_.declare_group(gpus); }
  std::uint64_t collectives() const { return collectives_; }
  std::uint64_t copies() const { return copies_; }
  double bytes_moved() const;  // summed over links (a byte crossing two links counts twice)
  // Records every link transfer of the trace's detailed steps on a track per link under
  // `process` (nullptr: no tracing).
  void set_trace(util::TraceRecorder* trace, const std::string& process);

 private:
  void b_transport(int port, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  interconnect::FabricModel model_;
  std::vector<int> link_tracks_;  // per link, -1 until its first transfer
  std::uint64_t current_step_ = 0;  // engine step of the transaction being run
  std::uint64_t collectives_ = 0;
  std::uint64_t copies_ = 0;
};

}  // namespace ks::hw
