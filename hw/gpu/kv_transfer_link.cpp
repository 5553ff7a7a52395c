#include "hw/gpu/kv_transfer_link.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "proto/extensions.hpp"
#include "sc_modules/sim/time.hpp"

namespace ks::hw {

KvTransferLink::KvTransferLink(const sc_core::sc_module_name& name,
                               std::shared_ptr<const interconnect::Topology> topology)
    : sc_core::sc_module(name), fabric_socket("fabric_socket"), topology_(std::move(topology)) {}

double KvTransferLink::exposed_bytes(double bytes, double bandwidth, const proto::KvStreaming& streaming) {
  if (streaming.layers <= 1 || !(streaming.window_s > 0) || !(bandwidth > 0)) return bytes;
  const double layers = static_cast<double>(streaming.layers);
  const double hidden = bandwidth * streaming.window_s * (layers - 1.0) / layers;
  return std::max(bytes / layers, bytes - hidden);
}

proto::KvTransferResult KvTransferLink::transfer(const std::vector<proto::KvShardCopy>& copies,
                                                 const proto::KvStreaming& streaming, std::uint64_t request_id) {
  const sc_core::sc_time issue = sc_core::sc_time_stamp();
  proto::KvTransferResult result;
  result.arrival = issue;
  for (const proto::KvShardCopy& c : copies) {
    const double bandwidth = topology_ && c.src != c.dst ? topology_->path_bandwidth(c.src, c.dst) : 0.0;
    const double sent = c.src == c.dst ? 0.0 : exposed_bytes(c.bytes, bandwidth, streaming);
    result.bytes += c.bytes;
    result.sent_bytes += sent;
    ++stats_.copies;
    if (sent <= 0) continue;
    // The exposed bytes go in one piece per layer (the streamed share of each layer is hidden).
    const int pieces = std::max(1, streaming.layers);
    sc_core::sc_time last = issue;
    for (int piece = 0; piece < pieces; ++piece) {
      proto::PooledPayload p(pool_);
      auto& copy = proto::PayloadPool::extension<proto::MemCopy>(*p);
      copy.src = c.src;
      copy.dst = c.dst;
      copy.bytes = sent / pieces;
      copy.engine_step = request_id;
      p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      fabric_socket->b_transport(*p, d);
      if (p->get_response_status() != tlm::TLM_OK_RESPONSE)
        throw std::runtime_error(std::string(name()) + ": the interconnect rejected the KV copy gpu" +
                                 std::to_string(c.src) + " -> gpu" + std::to_string(c.dst));
      last = std::max(last, copy.finish);
    }
    result.arrival = std::max(result.arrival, last);
    if (trace_ != nullptr)
      trace_->kernel(trace_track_, 0,
                     "kv request " + std::to_string(request_id) + " gpu" + std::to_string(c.src) + " -> gpu" +
                         std::to_string(c.dst),
                     "kv_transfer", issue.value(), last.value(),
                     "{\"request\":" + std::to_string(request_id) + ",\"bytes\":" + std::to_string(c.bytes) +
                         ",\"sent_after_prefill\":" + std::to_string(sent) + "}");
  }
  ++stats_.transfers;
  stats_.bytes += result.bytes;
  stats_.sent_bytes += result.sent_bytes;
  return result;
}

}  // namespace ks::hw
