#include "hw/gpu/pipeline_link.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sc_modules/sim/time.hpp"
#include "proto/extensions.hpp"

namespace ks::hw {

PipelineLink::PipelineLink(const sc_core::sc_module_name& name, std::vector<int> src, std::vector<int> dst)
    : sc_core::sc_module(name), fabric_socket("fabric_socket"), src_(std::move(src)), dst_(std::move(dst)) {
  if (src_.empty() || src_.size() != dst_.size())
    throw std::invalid_argument(std::string(this->name()) + ": a pipeline link needs as many receivers as senders");
}

sc_core::sc_time PipelineLink::send(double bytes_per_rank, kernels::Phase phase, std::uint64_t step) {
  const sc_core::sc_time issue = sc_core::sc_time_stamp();
  sc_core::sc_time arrival = issue;
  TransferStats& stats = stats_[phase];
  for (std::size_t r = 0; r < src_.size(); ++r) {
    proto::PooledPayload p(pool_);
    auto& copy = proto::PayloadPool::extension<proto::MemCopy>(*p);
    copy.src = src_[r];
    copy.dst = dst_[r];
    copy.bytes = bytes_per_rank;
    copy.engine_step = step;
    p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    fabric_socket->b_transport(*p, d);
    if (p->get_response_status() != tlm::TLM_OK_RESPONSE)
      throw std::runtime_error(std::string(name()) + ": fabric rejected the send gpu" + std::to_string(src_[r]) +
                               " -> gpu" + std::to_string(dst_[r]));
    arrival = std::max(arrival, copy.finish);
    ++stats.transfers;
    stats.seconds += sim::to_seconds(copy.finish - issue);
    stats.bytes += bytes_per_rank;
    if (trace_ != nullptr)
      trace_->kernel(trace_track_, step, "send gpu" + std::to_string(src_[r]) + " -> gpu" + std::to_string(dst_[r]),
                     "send_recv", issue.value(), copy.finish.value());
  }
  return arrival;
}

}  // namespace ks::hw
