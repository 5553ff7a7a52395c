#include "serving/pd_coordinator.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ks::serving {

PdCoordinator::PdCoordinator(sim::Environment& env, PdSettings settings, std::vector<PdMember> prefill,
                             std::vector<PdMember> decode, std::unique_ptr<Router> prefill_router,
                             std::unique_ptr<Router> decode_router, proto::KvTransferChannel& channel,
                             MetricsRecorder& metrics)
    : env_(env),
      settings_(std::move(settings)),
      prefill_(std::move(prefill)),
      decode_(std::move(decode)),
      prefill_router_(std::move(prefill_router)),
      decode_router_(std::move(decode_router)),
      channel_(channel),
      metrics_(metrics),
      shares_(kv_rank_shares(settings_.model, settings_.kv_dtype, settings_.prefill_tp, settings_.decode_tp)),
      pending_(decode_.size()),
      in_transfer_(decode_.size(), 0),
      held_blocks_(decode_.size(), 0),
      max_need_(decode_.size(), 0),
      deliveries_(env) {
  if (prefill_.empty() || decode_.empty()) throw std::invalid_argument("disaggregation needs prefill and decode replicas");
  for (const PdMember& m : prefill_)
    if (static_cast<int>(m.devices.size()) != settings_.prefill_tp)
      throw std::invalid_argument("a prefill replica needs prefill_tp GPUs");
  for (const PdMember& m : decode_)
    if (static_cast<int>(m.devices.size()) != settings_.decode_tp)
      throw std::invalid_argument("a decode replica needs decode_tp GPUs");
  for (PdMember& m : prefill_) m.replica->set_on_finish([this](Request& shadow) { prefill_done(shadow); });
  for (std::size_t d = 0; d < decode_.size(); ++d)
    decode_[d].replica->set_on_finish([this, d](Request& r) {
      if (on_finish_) on_finish_(r);
      try_admit(d);  // its blocks are free again
    });
  env_.process([this] { deliver_loop(); }, "pd.kv_delivery");
}

std::size_t PdCoordinator::waiting_for_decode() const {
  std::size_t n = 0;
  for (const auto& q : pending_) n += q.size();
  return n;
}

void PdCoordinator::submit(Request* request) {
  std::vector<ReplicaLoad> loads(prefill_.size());
  for (std::size_t i = 0; i < prefill_.size(); ++i) loads[i].outstanding = prefill_[i].replica->outstanding();
  const std::size_t target = prefill_router_->route(*request, loads);
  Request& shadow = shadows_.emplace_back();
  shadow.id = request->id;
  shadow.arrival_s = request->arrival_s;
  shadow.prompt_tokens = request->prompt_tokens;
  shadow.output_tokens = 1;  // the prefill instance computes the prompt and the first token
  shadow.prefix_group = request->prefix_group;
  shadow.group_tokens = request->group_tokens;
  shadow.prompt_ids = request->prompt_ids;
  shadow.replica = static_cast<std::int64_t>(target);
  real_[request->id] = request;
  prefill_.at(target).replica->submit(&shadow);
}

void PdCoordinator::prefill_done(Request& shadow) {
  const auto it = real_.find(shadow.id);
  if (it == real_.end()) throw std::logic_error("prefill finished an unknown request " + std::to_string(shadow.id));
  Request& r = *it->second;
  real_.erase(it);
  const double now = env_.now_seconds();
  r.first_scheduled_s = shadow.first_scheduled_s;
  r.cached_tokens = shadow.cached_tokens;
  r.preemptions += shadow.preemptions;
  if (r.output_tokens <= 1) {  // nothing to decode: the prefill's token is the answer
    r.generated = 1;
    r.first_token_s = r.last_token_s = r.finish_s = now;
    r.drop_working_state();
    StepOutcome done;
    done.emitted.push_back({&r, -1.0});
    done.finished.push_back(&r);
    metrics_.record(done, now);
    if (on_finish_) on_finish_(r);
    return;
  }
  std::vector<ReplicaLoad> loads(decode_.size());
  for (std::size_t d = 0; d < decode_.size(); ++d)
    loads[d].outstanding = decode_[d].replica->outstanding() + pending_[d].size() + in_transfer_[d];
  const std::size_t d = decode_router_->route(r, loads);
  max_need_[d] = std::max(max_need_[d], decode_[d].kv->blocks_for(r.prompt_tokens + r.output_tokens));
  pending_.at(d).push_back({&r, now, now - shadow.first_scheduled_s, static_cast<std::size_t>(shadow.replica)});
  try_admit(d);
}

// Back-pressure: the decode replica accepts the oldest waiting request once it has a sequence
// slot and the KV blocks of its prompt plus its first decoded token. While it serves other
// requests, the blocks of all requests in transfer also leave room for the largest request routed
// to it: should its scheduler have to preempt everything it runs, the request it recomputes first
// still fits beside the transfers in flight (vLLM keeps a watermark of free blocks for the same
// reason).
void PdCoordinator::try_admit(std::size_t d) {
  std::deque<Pending>& queue = pending_[d];
  PdMember& member = decode_[d];
  while (!queue.empty()) {
    const Pending p = queue.front();
    const std::size_t busy = member.replica->outstanding() + in_transfer_[d];
    if (static_cast<std::int64_t>(busy) >= settings_.decode_max_num_seqs) break;
    const std::int64_t need = member.kv->blocks_for(p.request->prompt_tokens + 1);
    if (busy > 0 && held_blocks_[d] + need + max_need_[d] > member.kv->num_blocks()) break;
    if (!member.kv->allocate(*p.request, 0, p.request->prompt_tokens + 1)) break;
    held_blocks_[d] += need;
    queue.pop_front();
    start_transfer(p, d);
  }
}

void PdCoordinator::start_transfer(const Pending& p, std::size_t d) {
  Request& r = *p.request;
  const double now = env_.now_seconds();
  const bool waited = now > p.prefill_end_s;
  std::vector<proto::KvShardCopy> copies;
  copies.reserve(shares_.size());
  const double tokens = static_cast<double>(r.prompt_tokens);
  for (const KvRankShare& s : shares_)
    copies.push_back({prefill_[p.prefill].devices[static_cast<std::size_t>(s.src_rank)],
                      decode_[d].devices[static_cast<std::size_t>(s.dst_rank)], s.bytes_per_token * tokens});
  // Streaming overlaps the prefill only when the decode side had room as the prefill ran; after a
  // wait for room, the whole cache moves.
  proto::KvStreaming streaming{settings_.model.num_layers, 0.0};
  if (settings_.mode == KvTransferMode::Layerwise && !waited) streaming.window_s = p.window_s;
  const proto::KvTransferResult result = channel_.transfer(copies, streaming, r.id);
  ++stats_.transfers;
  stats_.copies += copies.size();
  stats_.bytes += result.bytes;
  stats_.sent_bytes += result.sent_bytes;
  const double arrival = sim::to_seconds(result.arrival);
  stats_.transfer_s.push_back(arrival - now);
  stats_.exposed_s.push_back(arrival - p.prefill_end_s);
  stats_.wait_s.push_back(now - p.prefill_end_s);
  if (waited) ++stats_.waited;
  ++in_transfer_[d];
  r.replica = static_cast<std::int64_t>(prefill_.size() + d);
  env_.schedule(result.arrival, sim::kNormal, [this, &r, d] { deliveries_.put_event({&r, d}); });
}

// The KV is in place: the first token goes out and the request joins the decode batch as a
// running request holding prompt + 1 tokens of blocks (BatchScheduler::add takes a request that
// holds blocks as running).
void PdCoordinator::deliver_loop() {
  for (;;) {
    const Delivery got = deliveries_.get();
    Request& r = *got.request;
    const double now = env_.now_seconds();
    r.computed_tokens = r.prompt_tokens;
    r.generated = 1;
    r.first_token_s = r.last_token_s = now;
    --in_transfer_[got.decode];
    held_blocks_[got.decode] -= static_cast<std::int64_t>(r.block_table.size());
    decode_[got.decode].replica->submit(&r);
  }
}

}  // namespace ks::serving
