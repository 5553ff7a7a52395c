#include "hw/gpu/tp_group.hpp"

#include <algorithm>
#include <stdexcept>

#include "sc_modules/sim/time.hpp"

namespace ks::hw {
namespace {
proto::CollectiveKind collective_kind(kernels::OpKind op) {
  if (op == kernels::OpKind::AllToAll) return proto::CollectiveKind::AllToAll;
  return op == kernels::OpKind::AllGather ? proto::CollectiveKind::AllGather : proto::CollectiveKind::AllReduce;
}
}  // namespace


TpGroup::TpGroup(const sc_core::sc_module_name& name, const std::vector<GpuModule*>& gpus)
    : sc_core::sc_module(name), socket("socket"), fabric_socket("fabric_socket") {
  if (gpus.empty()) throw std::invalid_argument("a TP group needs at least one GPU");
  socket.register_b_transport(this, &TpGroup::b_transport);
  for (GpuModule* gpu : gpus) {
    auto s = std::make_unique<proto::GpuInitiatorSocket<TpGroup>>(
        sc_core::sc_gen_unique_name("rank"));
    s->bind(gpu->socket);
    ranks_.push_back(std::move(s));
    device_ids_.push_back(gpu->device_id());
  }
}

// When every rank's `stream` is idle (absolute time).
sc_core::sc_time TpGroup::stream_ready(int stream) {
  sc_core::sc_time ready = sc_core::SC_ZERO_TIME;
  for (auto& rank : ranks_) {
    proto::PooledPayload p(sync_pool_);
    proto::PayloadPool::extension<proto::Synchronize>(*p).stream = stream;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    (*rank)->b_transport(*p, d);
    ready = std::max(ready, sc_core::sc_time_stamp() + d);
  }
  return ready;
}

void TpGroup::wait_stream(int stream, const sc_core::sc_time& until) {
  for (auto& rank : ranks_) {
    proto::PooledPayload p(wait_pool_);
    auto& w = proto::PayloadPool::extension<proto::StreamWait>(*p);
    w.stream = stream;
    w.until = until;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    (*rank)->b_transport(*p, d);
    if (p->get_response_status() != tlm::TLM_OK_RESPONSE)
      throw std::runtime_error(std::string(name()) + ": GPU rejected a stream wait");
  }
}

void TpGroup::collective(proto::KernelLaunch& k, const sc_core::sc_time& issue) {
  const sc_core::sc_time compute_done = stream_ready(kComputeStream);
  sc_core::sc_time ready = std::max({issue, compute_done, stream_ready(kCommStream)});
  k.start = ready;
  for (int r = 0; r < k.repeat; ++r) {
    proto::PooledPayload p(coll_pool_);
    auto& c = proto::PayloadPool::extension<proto::Collective>(*p);
    c.kind = collective_kind(k.kernel.op);
    c.algorithm = proto::CollectiveAlgorithm::Auto;
    c.bytes = k.kernel.bytes;
    c.group = device_ids_;
    c.stream = kCommStream;
    c.engine_step = k.step;
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    sc_core::sc_time d = ready > now ? ready - now : sc_core::SC_ZERO_TIME;
    fabric_socket->b_transport(*p, d);
    if (p->get_response_status() != tlm::TLM_OK_RESPONSE)
      throw std::runtime_error(std::string(name()) + ": fabric rejected collective '" + k.kernel.name + "'");
    ready = c.finish;
    ++tally_.count;
  }
  k.finish = ready;
  const double seconds = sim::to_seconds(k.finish - k.start);
  tally_.busy += k.finish - k.start;
  k.cost = {seconds / k.repeat, 0, 0, 0, kernels::Bound::Communication, 1.0};
  if (trace_ != nullptr) trace_->kernel(trace_track_, k.step, k.kernel.name, "collective", k.start.value(), k.finish.value());
  wait_stream(kCommStream, k.finish);
  if (!k.overlap) {
    // Held back: from when compute could have gone on (input ready and launch issued) to the end.
    const sc_core::sc_time could_go = std::max(issue, compute_done);
    if (k.finish > could_go) tally_.exposed += k.finish - could_go;
    wait_stream(kComputeStream, k.finish);
  }
}

TpGroup::ProbeResult TpGroup::probe(const kernels::Kernel& collective) {
  proto::PooledPayload p(coll_pool_);
  auto& c = proto::PayloadPool::extension<proto::Collective>(*p);
  c.kind = collective_kind(collective.op);
  c.algorithm = proto::CollectiveAlgorithm::Auto;
  c.bytes = collective.bytes;
  c.group = device_ids_;
  c.stream = kCommStream;
  c.probe = true;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  fabric_socket->b_transport(*p, d);
  c.probe = false;  // the pool reuses the extension
  return {p->get_response_status() == tlm::TLM_OK_RESPONSE, c.exclusive, c.idle_duration};
}

bool TpGroup::links_exclusive() {
  kernels::Kernel nothing;
  nothing.op = kernels::OpKind::AllReduce;
  const ProbeResult r = probe(nothing);
  return r.ok && r.exclusive;
}

sc_core::sc_time TpGroup::duration(const kernels::Kernel& collective) {
  const std::pair<int, double> key{static_cast<int>(collective.op), collective.bytes};
  if (auto it = durations_.find(key); it != durations_.end()) return it->second;
  const ProbeResult r = probe(collective);
  if (!r.ok) throw std::runtime_error(std::string(name()) + ": fabric rejected a probe for '" + collective.name + "'");
  durations_.emplace(key, r.idle_duration);
  return r.idle_duration;
}

void TpGroup::launch_step(tlm::tlm_generic_payload& payload, proto::StepLaunch& st, const sc_core::sc_time& delay) {
  if (step_path_ == StepPath::Unknown) step_path_ = links_exclusive() ? StepPath::Whole : StepPath::KernelByKernel;
  if (step_path_ != StepPath::Whole) {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);  // the host sends kernels one by one
    return;
  }
  // Every rank runs the same shard, so every rank's streams move alike; the first counts the
  // collectives for the group (the group's totals go out with the launch and come back) and
  // records its stream times for the others.
  time_collectives(st.kernels, st.collective_times);
  st.comm_stream = kCommStream;
  sc_core::sc_time finish = sc_core::SC_ZERO_TIME;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    st.count_collectives = r == 0;
    if (r == 0) st.tally = tally_;
    st.replay_role = r == 0 ? proto::StepLaunch::Replay::Record : proto::StepLaunch::Replay::Reuse;
    sc_core::sc_time d = delay;
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    (*ranks_[r])->b_transport(payload, d);
    if (payload.get_response_status() != tlm::TLM_OK_RESPONSE) {
      if (r == 0 && payload.get_response_status() == tlm::TLM_COMMAND_ERROR_RESPONSE) {
        step_path_ = StepPath::KernelByKernel;  // a GPU kind without step launches: nothing ran yet
        clear_group_fields(st);
        return;
      }
      throw std::runtime_error(std::string(name()) + ": rank " + std::to_string(r) + " rejected a step launch");
    }
    if (r == 0) tally_ = st.tally;
    finish = std::max(finish, st.finish);
  }
  clear_group_fields(st);
  st.finish = finish;
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

// The group's fields go back to "no group": the host reuses the extension.
void TpGroup::clear_group_fields(proto::StepLaunch& st) {
  st.collective_times.clear();
  st.count_collectives = false;
  st.replay_role = proto::StepLaunch::Replay::None;
}

// Every distinct collective of the step (by kind and size) with its duration on idle links.
void TpGroup::time_collectives(const kernels::StepKernels& step, std::vector<proto::CollectiveTime>& out) {
  out.clear();
  for (const auto* part : {&step.pre, &step.per_layer, &step.post})
    for (const kernels::ChunkPtr& chunk : part->chunks()) {
      if (!chunk->has_collective) continue;
      for (const kernels::Kernel& k : chunk->kernels) {
        if (!kernels::is_collective(k.op)) continue;
        const bool known = std::any_of(out.begin(), out.end(), [&k](const proto::CollectiveTime& t) {
          return t.op == k.op && t.bytes == k.bytes;
        });
        if (!known) out.push_back({k.op, k.bytes, duration(k)});
      }
    }
}

void TpGroup::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const sc_core::sc_time issue = sc_core::sc_time_stamp() + delay;
  if (auto* st = payload.get_extension<proto::StepLaunch>()) {
    launch_step(payload, *st, delay);
    return;
  }
  // Ranks may spend simulated time inside b_transport (a GPU serving its queue from its own
  // thread): every rank gets the issue time relative to the current sc_time_stamp(), and the
  // delay handed back is re-based the same way, so the launcher's time stays issue-or-later.
  auto until_issue = [&issue] {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    return issue > now ? issue - now : sc_core::SC_ZERO_TIME;
  };
  try {
    if (auto* k = payload.get_extension<proto::KernelLaunch>()) {
      if (kernels::is_collective(k->kernel.op) && size() > 1) {
        collective(*k, issue);
      } else {
        for (auto& rank : ranks_) {
          sc_core::sc_time d = until_issue();
          (*rank)->b_transport(payload, d);
          if (payload.get_response_status() != tlm::TLM_OK_RESPONSE) return;
        }
      }
      delay = until_issue();
    } else if (payload.get_extension<proto::Synchronize>() != nullptr) {
      sc_core::sc_time latest = issue;  // absolute
      for (auto& rank : ranks_) {
        sc_core::sc_time d = until_issue();
        (*rank)->b_transport(payload, d);
        latest = std::max(latest, sc_core::sc_time_stamp() + d);
      }
      const sc_core::sc_time now = sc_core::sc_time_stamp();
      delay = latest > now ? latest - now : sc_core::SC_ZERO_TIME;
    } else {
      for (auto& rank : ranks_) {  // StreamWait and anything else: every rank
        sc_core::sc_time d = until_issue();
        (*rank)->b_transport(payload, d);
        if (payload.get_response_status() != tlm::TLM_OK_RESPONSE) return;
      }
      delay = until_issue();
    }
  } catch (const std::runtime_error&) {
    payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace ks::hw
