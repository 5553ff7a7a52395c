#include "hw/interconnect/fabric_module.hpp"

#include <stdexcept>
#include <string>

#include "sc_modules/sim/time.hpp"

namespace ks::hw {

FabricModule::FabricModule(const sc_core::sc_module_name& name,
                           std::shared_ptr<const interconnect::Topology> topology)
    : sc_core::sc_module(name), socket("socket"), model_(std::move(topology)) {
  socket.register_b_transport(this, &FabricModule::b_transport);
}

double FabricModule::bytes_moved() const {
  double b = 0;
  for (const auto& l : model_.links()) b += l.bytes();
  return b;
}

void FabricModule::set_trace(util::TraceRecorder* trace, const std::string& process) {
  if (trace == nullptr) {
    model_.set_link_observer(nullptr);
    return;
  }
  link_tracks_.assign(model_.topology().links().size(), -1);
  model_.set_link_observer([this, trace, process](int link, double start, double end, double bytes) {
    // Like kernels: transfer by transfer in the first steps, then one event per step and link.
    int& track = link_tracks_[static_cast<std::size_t>(link)];
    if (track < 0) track = trace->track(process, model_.topology().links()[static_cast<std::size_t>(link)].name);
    const auto ps = [](double s) { return static_cast<std::uint64_t>(s * 1e12 + 0.5); };
    trace->transfer(track, current_step_, ps(start), ps(end), bytes);
  });
}

void FabricModule::b_transport(int, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const double issue = sim::to_seconds(sc_core::sc_time_stamp() + delay);
  model_.set_horizon(sim::to_seconds(sc_core::sc_time_stamp()));  // nothing is issued in the past
  try {
    if (auto* c = payload.get_extension<proto::Collective>()) {
      if (c->probe) {
        c->exclusive = model_.exclusive(c->group);
        if (c->exclusive) model_.claim_exclusive(c->group);
        c->idle_duration = sim::seconds(model_.idle_collective_time(c->kind, c->algorithm, c->group, c->bytes));
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
      }
      model_.check_undeclared(c->group);
      current_step_ = c->engine_step;
      const auto t = model_.collective(c->kind, c->algorithm, c->group, c->bytes, issue);
      c->start = sim::seconds(t.start);
      c->finish = sim::seconds(t.finish);
      ++collectives_;
    } else if (auto* m = payload.get_extension<proto::MemCopy>()) {
      if (m->src < 0 || m->dst < 0) throw std::invalid_argument("host-memory copies are not modelled by the fabric");
      model_.check_undeclared({m->src, m->dst});
      current_step_ = m->engine_step;
      m->finish = sim::seconds(model_.transfer(m->src, m->dst, m->bytes, issue).finish);
      ++copies_;
    } else {
      payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
      return;
    }
  } catch (const std::invalid_argument&) {
    payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace ks::hw
