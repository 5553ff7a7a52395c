#include "hw/gpu/gpu_module.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "sc_modules/sim/time.hpp"

namespace ks::hw {

GpuModule::GpuModule(const sc_core::sc_module_name& name, int device_id)
    : sc_core::sc_module(name), socket("socket"), device_id_(device_id) {
  socket.register_b_transport(this, &GpuModule::b_transport);
  set_stats_sink(own_stats_);
}

void GpuModule::set_stats_sink(proto::KernelStatsSink& sink) {
  if (!slots_.empty()) throw std::logic_error(std::string(name()) + ": stats sink set after the first launch");
  stats_ = &sink;
  sink.settle_before_reading([this] { settle_all(); });
}

sc_core::sc_time GpuModule::stream_free_at(int stream) const {
  if (stream >= 0) return stream_free_.at(static_cast<std::size_t>(stream));
  return *std::max_element(stream_free_.begin(), stream_free_.end());
}

void GpuModule::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const sc_core::sc_time issue = sc_core::sc_time_stamp() + delay;
  if (auto* k = payload.get_extension<proto::KernelLaunch>()) {
    if (k->stream < 0 || k->stream >= kMaxStreams || k->repeat < 1) {
      payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    launch(*k, issue);  // asynchronous: the launcher's time does not move
  } else if (auto* st = payload.get_extension<proto::StepLaunch>()) {
    if (st->stream < 0 || st->stream >= kMaxStreams || st->comm_stream < 0 || st->comm_stream >= kMaxStreams) {
      payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    if (st->collective_times.empty() && has_collective(st->kernels)) {
      payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);  // only a TP group can time them
      return;
    }
    launch_step(*st, issue);
  } else if (auto* s = payload.get_extension<proto::Synchronize>()) {
    const sc_core::sc_time done = stream_free_at(s->stream);
    if (done > issue) delay += done - issue;
  } else if (auto* w = payload.get_extension<proto::StreamWait>()) {
    if (w->stream < 0 || w->stream >= kMaxStreams) {
      payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    auto& free_at = stream_free_[static_cast<std::size_t>(w->stream)];
    free_at = std::max(free_at, w->until);
  } else {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

std::size_t GpuModule::SlotKeyHash::operator()(const SlotKey& k) const {
  return std::hash<const void*>()(k.name) ^ (static_cast<std::size_t>(k.op) << 8) ^
         (static_cast<std::size_t>(k.phase) << 16);
}

GpuModule::StatsSlots GpuModule::slots_for(const kernels::Kernel& kernel) {
  const SlotKey key{kernel.name, kernel.op, kernel.phase};
  if (auto it = slots_.find(key); it != slots_.end()) return it->second;
  // A sink's rows stay where they are, so the pointers stay valid.
  const StatsSlots slots{&stats_->row({kernel.name, kernel.op, kernel.phase})};
  slots_.emplace(key, slots);
  return slots;
}

void GpuModule::account(const kernels::Kernel& kernel, const kernels::KernelCost& cost, int repeat,
                        const StatsSlots& slots) {
  if (slots.row == nullptr) return;  // a collective: the TP group's statistics
  const auto n = static_cast<std::uint64_t>(repeat);
  busy_ps_ += proto::to_picoseconds(cost.seconds) * repeat;
  kernels_executed_ += n;
  slots.row->add(kernel, cost, n);
}

// `repeat` launches of each priced kernel of a part: the GPU's totals now (integer sums: the same
// as kernel by kernel), its statistics rows later.
inline void GpuModule::defer_account(Part& part, int repeat) {
  busy_ps_ += part.ps * repeat;
  kernels_executed_ += part.run * static_cast<std::uint64_t>(repeat);
  part.launches += static_cast<std::uint64_t>(repeat);
}

// Its launches not yet in its statistics rows (`launches`: its part's) added.
inline void GpuModule::settle(const PricedKernel& p, std::uint64_t launches) {
  if (p.settled == launches) return;
  if (p.slots.row != nullptr) p.slots.row->add(p.kernel_copy, p.cost, launches - p.settled);  // null: a collective
  p.settled = launches;
}

// A priced kernel about to be replaced or dropped: settled, and out of its part's totals.
inline void GpuModule::forget(const PricedKernel& p, Part& part) {
  settle(p, part.launches);
  if (p.slots.row == nullptr) return;
  part.ps -= static_cast<std::int64_t>(p.duration.value());  // = to_picoseconds(cost.seconds)
  --part.run;
}

void GpuModule::settle_all() const {
  for (const Part* part : {&pre_, &layer_, &post_})
    for (const PricedKernel& p : part->priced) settle(p, part->launches);
}

void GpuModule::launch(proto::KernelLaunch& k, const sc_core::sc_time& issue_time) {
  k.cost = kernel_cost(k.kernel);
  auto& free_at = stream_free_[static_cast<std::size_t>(k.stream)];
  k.start = std::max(issue_time, free_at);
  const double total = k.cost.seconds * k.repeat;
  k.finish = k.start + sc_core::sc_time(total, sc_core::SC_SEC);
  free_at = k.finish;
  account(k.kernel, k.cost, k.repeat, slots_for(k.kernel));
  if (trace_ != nullptr && trace_->recording())
    trace_->kernel(proto::KernelSpan{k.kernel, k.cost, k.stream, k.layer, k.repeat, k.step, k.start, k.finish});
}

bool GpuModule::has_collective(const kernels::StepKernels& step) {
  return step.pre.has_collective() || step.per_layer.has_collective() || step.post.has_collective();
}

// A chunk that is the very one priced at the same position last time has the same kernels
// (chunks are immutable while shared), so its prices stay; the kernels of a new chunk of the size
// of the one it replaces are priced in its place. False, with the part partly repriced, when the
// sizes differ: then price() lines every kernel up again.
bool GpuModule::reprice_new_chunks(const kernels::KernelList& list, Part& part,
                                   const std::vector<proto::CollectiveTime>& collectives) {
  kernels::ChunkList& held = part.chunks;
  const std::size_t n = list.chunks().size();
  if (n != held.size()) return false;
  // Raw pointers: the calls below cannot move these vectors, and the compiler need not reload them.
  const kernels::ChunkPtr* now = list.chunks().data();
  kernels::ChunkPtr* was = held.data();
  PricedKernel* at = part.priced.data();  // held's kernels, position by position
  for (std::size_t c = 0; c < n; ++c) {
    const kernels::KernelChunk* chunk = now[c].get();
    const std::size_t size = chunk->kernels.size();
    if (chunk != was[c].get()) {
      if (size != was[c]->kernels.size()) return false;
      const kernels::Kernel* kernels = chunk->kernels.data();
      // Several kernels to price: announce them first (a memoised model fetches their slots together).
      if (size > 2)
        for (std::size_t j = 0; j < size; ++j) will_price(kernels[j]);
      for (std::size_t j = 0; j < size; ++j) price_one(kernels[j], at[j], part, true, collectives);
      was[c] = now[c];
    }
    at += size;
  }
  return true;
}

// Every kernel priced, or kept when it equals the kernel priced at its position last time.
void GpuModule::price(const kernels::KernelList& list, Part& part, bool reuse,
                      const std::vector<proto::CollectiveTime>& collectives) {
  std::vector<PricedKernel>& out = part.priced;
  const std::size_t kept = reuse ? std::min(out.size(), list.size()) : 0;
  for (std::size_t i = list.size(); i < out.size(); ++i) forget(out[i], part);
  out.resize(list.size());  // new entries are blank: no rows, nothing to forget
  if (reuse)
    for (const kernels::Kernel& k : list) will_price(k);
  std::size_t i = 0;
  for (const kernels::ChunkPtr& chunk : list.chunks())
    for (const kernels::Kernel& k : chunk->kernels) {
      price_one(k, out[i], part, i < kept, collectives);
      ++i;
    }
  part.chunks = list.chunks();
}

// `p` held the same position's kernel of the previous step (`kept`) or nothing.
void GpuModule::price_one(const kernels::Kernel& kernel, PricedKernel& p, Part& part, bool kept,
                          const std::vector<proto::CollectiveTime>& collectives) {
  if (kept && same_shape(p.kernel_copy, kernel)) return;
  // Priced before the shape it replaces is forgotten: a pricing that throws leaves `p` and its
  // part's totals as they were.
  if (kernels::is_collective(kernel.op)) {  // timed by the group, not run here (no statistics)
    const sc_core::sc_time time = collective_time(collectives, kernel);
    forget(p, part);
    p = {kernels::KernelCost{}, time, StatsSlots{nullptr}, {}};
  } else {
    const kernels::KernelCost cost = kernel_cost(kernel);
    // The same rounding as sc_time(seconds, SC_SEC) at the 1 ps resolution, without its library call.
    const auto duration = sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(proto::to_picoseconds(cost.seconds)));
    forget(p, part);  // the shape it replaces
    // The same statistics rows as the kernel it replaces when name, op and phase stay (attention).
    const bool same_rows = kept && p.slots.row != nullptr && p.kernel_copy.name == kernel.name &&
                           p.kernel_copy.op == kernel.op && p.kernel_copy.phase == kernel.phase;
    // Field by field: a braced PricedKernel would build a blank kernel_copy only to overwrite it.
    p.cost = cost;
    p.duration = duration;
    if (!same_rows) p.slots = slots_for(kernel);
    part.ps += static_cast<std::int64_t>(duration.value());
    ++part.run;
  }
  p.kernel_copy = kernel;
  p.settled = part.launches;
}

sc_core::sc_time GpuModule::collective_time(const std::vector<proto::CollectiveTime>& times,
                                            const kernels::Kernel& collective) const {
  for (const proto::CollectiveTime& t : times)
    if (t.op == collective.op && t.bytes == collective.bytes) return t.duration;
  throw std::logic_error(std::string(name()) + ": no time given for collective '" + collective.name + "'");
}

// Everything a kernel's price and report rows depend on.
bool GpuModule::same_shape(const kernels::Kernel& a, const kernels::Kernel& b) {
  return a.op == b.op && a.name == b.name && a.phase == b.phase && a.dtype == b.dtype && a.m == b.m && a.n == b.n &&
         a.k == b.k && a.flops == b.flops && a.bytes == b.bytes && a.groups == b.groups && a.batch == b.batch &&
         a.heads == b.heads && a.kv_heads == b.kv_heads;
}

// The same stream timing as one launch per kernel, without walking every layer. A stream is a
// max-plus recurrence: kernel i finishes at f_i = max(t_i, f_{i-1}) + d_i with issue times
// t_i = t0 + (i + 1) L. Over one layer of P kernels this is f_out = max(f_in + D, b + A), where
// D is the layer's GPU time, b the layer's base issue time and A = max_j((j + 1) L + d_j + ... +
// d_{P-1}). Layer l has base b_0 + l P L, so after n layers the latest of the n issue terms is
// the first layer's (P L <= D: GPU-bound) or the last one's (launch-bound). Integer picoseconds
// throughout, so the result is exactly the per-kernel one. Statistics are added in the same
// statistics are exact integer sums, so kernels.csv is identical too.
void GpuModule::launch_step(proto::StepLaunch& st, const sc_core::sc_time& issue_time) {
  const kernels::StepKernels& step = st.kernels;
  // Prices kept where they may be (pure costs): the chunks priced last time keep theirs.
  const bool reuse = reuses_kernel_costs();
  const auto& times = st.collective_times;
  auto update = [&](const kernels::KernelList& list, Part& part) {
    if (reuse && same_chunks(list, part.chunks)) return;
    if (!reuse || !reprice_new_chunks(list, part, times)) price(list, part, reuse, times);
  };
  update(step.pre, pre_);
  update(step.per_layer, layer_);
  update(step.post, post_);
  if (!st.collective_times.empty() && has_collective(step)) {
    launch_step_with_collectives(st, issue_time);
  } else {
    launch_step_closed_form(st, issue_time);
  }
  // Integer statistics: one add of n launches per layer kernel equals n separate launches.
  const int n = step.num_layers;
  defer_account(pre_, 1);
  if (n > 0)
    defer_account(layer_, n);
  defer_account(post_, 1);
}

// A TP rank's step: kernel by kernel (layers are no longer a closed form once collectives,
// timed by the group, sit between them), but without a transaction or a price per kernel. The
// same arithmetic as TpGroup::collective for each collective kernel.
void GpuModule::launch_step_with_collectives(proto::StepLaunch& st, const sc_core::sc_time& issue_time) {
  const sc_core::sc_time L = st.launch_overhead;
  auto& compute_free = stream_free_[static_cast<std::size_t>(st.stream)];
  auto& comm_free = stream_free_[static_cast<std::size_t>(st.comm_stream)];
  using Replay = proto::StepLaunch::Replay;
  if (st.replay_role == Replay::Reuse && replay_matches(st.replay, issue_time, compute_free, comm_free)) {
    compute_free = st.replay.compute_after;
    comm_free = st.replay.comm_after;
    st.finish = std::max(compute_free, comm_free);
    return;
  }
  const bool record = st.replay_role == Replay::Record;
  if (record) {
    st.replay.issue = issue_time;
    st.replay.compute_before = compute_free;
    st.replay.comm_before = comm_free;
    st.replay.durations.clear();
    for (const Part* part : {&pre_, &layer_, &post_})
      for (const PricedKernel& p : part->priced) st.replay.durations.push_back(p.duration);
  }
  // The group's collectives, counted by one rank: a layer's own tally, and the step's.
  proto::CollectiveTally layer_tally, step_tally;
  sc_core::sc_time issued = issue_time;
  bool issue_bound = false;  // the issue time decided a maximum (the launch-bound side)
  auto run_one = [&](const PricedKernel& p) {
    issued += L;
    if (p.slots.row != nullptr) {
      issue_bound |= issued > compute_free;
      compute_free = std::max(issued, compute_free) + p.duration;
      return;
    }
    const sc_core::sc_time compute_done = compute_free;
    issue_bound |= issued > compute_done;
    const sc_core::sc_time ready = std::max({issued, compute_done, comm_free});
    const sc_core::sc_time finish = ready + p.duration;
    comm_free = std::max(comm_free, finish);
    const sc_core::sc_time could_go = std::max(issued, compute_done);  // the compute stream waits
    compute_free = std::max(compute_free, finish);
    ++layer_tally.count;
    layer_tally.busy += finish - ready;
    if (finish > could_go) layer_tally.exposed += finish - could_go;
  };
  auto add_layer_tally = [&](sc_dt::uint64 times) {
    step_tally.count += layer_tally.count * times;
    step_tally.busy += sc_core::sc_time::from_value(layer_tally.busy.value() * times);
    step_tally.exposed += sc_core::sc_time::from_value(layer_tally.exposed.value() * times);
    layer_tally = {};
  };
  for (const PricedKernel& p : pre_.priced) run_one(p);
  add_layer_tally(1);
  // Layers one by one until one of them maps its start (compute, comm and issue times) to its end
  // by adding the same time to each, or to the two stream times when the issue time decided
  // nothing in it and advances no faster. The walk is a max-plus recurrence, so shifting its
  // inputs shifts its outputs: every later layer then repeats that one shifted, with the same
  // collective durations and exposure, and the rest is a multiplication (the same integer
  // picoseconds as the walk, the tally's too).
  const int n = st.kernels.num_layers;
  for (int layer = 0; layer < n; ++layer) {
    const sc_core::sc_time c0 = compute_free, m0 = comm_free, i0 = issued;
    issue_bound = false;
    for (const PricedKernel& p : layer_.priced) run_one(p);
    const sc_core::sc_time dc = compute_free - c0, dm = comm_free - m0, di = issued - i0;
    if (dc != dm || !(dc == di || (!issue_bound && dc >= di))) {
      add_layer_tally(1);
      continue;
    }
    const auto rest = static_cast<sc_dt::uint64>(n - 1 - layer);
    compute_free += sc_core::sc_time::from_value(dc.value() * rest);
    comm_free += sc_core::sc_time::from_value(dm.value() * rest);
    issued += sc_core::sc_time::from_value(di.value() * rest);
    add_layer_tally(rest + 1);
    break;
  }
  for (const PricedKernel& p : post_.priced) run_one(p);
  add_layer_tally(1);
  if (st.count_collectives) {
    st.tally.count += step_tally.count;
    st.tally.busy += step_tally.busy;
    st.tally.exposed += step_tally.exposed;
  }
  st.finish = std::max(compute_free, comm_free);
  if (record) {
    st.replay.compute_after = compute_free;
    st.replay.comm_after = comm_free;
  }
}

// The recurrence is deterministic: the same start and the same durations give the same end.
bool GpuModule::replay_matches(const proto::StepReplay& r, const sc_core::sc_time& issue,
                               const sc_core::sc_time& compute_free, const sc_core::sc_time& comm_free) const {
  if (r.issue != issue || r.compute_before != compute_free || r.comm_before != comm_free) return false;
  if (r.durations.size() != pre_.priced.size() + layer_.priced.size() + post_.priced.size()) return false;
  std::size_t i = 0;
  for (const Part* part : {&pre_, &layer_, &post_})
    for (const PricedKernel& p : part->priced)
      if (p.duration != r.durations[i++]) return false;
  return true;
}

void GpuModule::launch_step_closed_form(proto::StepLaunch& st, const sc_core::sc_time& issue_time) {
  const kernels::StepKernels& step = st.kernels;
  const sc_core::sc_time L = st.launch_overhead;
  auto& free_at = stream_free_[static_cast<std::size_t>(st.stream)];
  sc_core::sc_time issued = issue_time;  // issue time of the last kernel so far
  sc_core::sc_time f = free_at;
  auto run_one = [&](const PricedKernel& p) {
    issued += L;
    f = std::max(issued, f) + p.duration;
  };
  for (const PricedKernel& p : pre_.priced) run_one(p);

  const int n = step.num_layers;
  const std::vector<PricedKernel>& layer = layer_.priced;
  if (n > 0 && !layer.empty()) {
    // In integer picoseconds: sc_time * double goes through a double and sc_time::from_value
    // is a library call, several times the cost of the arithmetic (the same values).
    using Ps = sc_dt::uint64;
    const Ps l = L.value(), layers = static_cast<Ps>(n), P = layer.size();
    Ps D = 0, A = 0;
    for (Ps j = P; j-- > 0;) {
      D += layer[j].duration.value();
      A = std::max(A, l * (j + 1) + D);
    }
    const Ps layer_launch = l * P;
    const Ps b0 = issued.value();
    const Ps latest = layer_launch <= D ? 0 : layers - 1;  // the layer whose issue term dominates
    const Ps from_issue = b0 + layer_launch * latest + A + D * (layers - 1 - latest);
    f = sc_core::sc_time::from_value(std::max(f.value() + D * layers, from_issue));
    issued = sc_core::sc_time::from_value(b0 + layer_launch * layers);
  }
  for (const PricedKernel& p : post_.priced) run_one(p);
  free_at = f;
  st.finish = f;
}

}  // namespace ks::hw
