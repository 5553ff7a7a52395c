#pragma once
// Example (3) of issue 18: a user's interconnect, written only against the TLM contract
// (proto/), replacing KernelSight's fabric. Every Collective and MemCopy crosses one shared
// crossbar, one transfer at a time, taking
//   all-reduce:             latency + 2 (n-1)/n x bytes / bandwidth   (ring, n = group size)
//   all-gather and others:  latency +   (n-1)/n x bytes / bandwidth
//   copy:                   latency + bytes / bandwidth
// A transfer starts at max(issue, crossbar free) and the crossbar fills start/finish (loosely
// timed, b_transport returns at once). Probes are answered with the idle duration and
// `exclusive = false`: the crossbar is shared, so TP groups launch kernel by kernel.
#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "proto/extensions.hpp"
#include "proto/protocol.hpp"

namespace user_interconnect {

class Crossbar : public sc_core::sc_module {
 public:
  // Several initiators (every TP group and pipeline link) bind here.
  tlm_utils::multi_passthrough_target_socket<Crossbar, ks::proto::kBusWidth, ks::proto::gpu_protocol_types> socket{
      "socket"};

  Crossbar(const sc_core::sc_module_name& name, sc_core::sc_time latency, double bandwidth)
      : sc_core::sc_module(name), latency_(latency), bandwidth_(bandwidth) {
    socket.register_b_transport(this, &Crossbar::b_transport);
  }

  sc_core::sc_time collective_time(ks::proto::CollectiveKind kind, double bytes, std::size_t n) const {
    const double share = n > 1 ? static_cast<double>(n - 1) / static_cast<double>(n) : 0.0;
    const double factor = kind == ks::proto::CollectiveKind::AllReduce ? 2 * share : share;
    return latency_ + sc_core::sc_time(factor * bytes / bandwidth_, sc_core::SC_SEC);
  }
  std::uint64_t collectives() const { return collectives_; }
  std::uint64_t copies() const { return copies_; }

 private:
  void b_transport(int /*port*/, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const sc_core::sc_time issue = sc_core::sc_time_stamp() + delay;
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    if (auto* c = p.get_extension<ks::proto::Collective>()) {
      const sc_core::sc_time d = collective_time(c->kind, c->bytes, c->group.size());
      if (c->probe) {
        c->idle_duration = d;
        c->exclusive = false;
        return;
      }
      c->start = issue > free_ ? issue : free_;
      c->finish = free_ = c->start + d;
      ++collectives_;
    } else if (auto* m = p.get_extension<ks::proto::MemCopy>()) {
      const sc_core::sc_time start = issue > free_ ? issue : free_;
      m->finish = free_ = start + latency_ + sc_core::sc_time(m->bytes / bandwidth_, sc_core::SC_SEC);
      ++copies_;
    } else {
      p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    }
  }

  sc_core::sc_time latency_;
  double bandwidth_;
  sc_core::sc_time free_;
  std::uint64_t collectives_ = 0, copies_ = 0;
};

}  // namespace user_interconnect
