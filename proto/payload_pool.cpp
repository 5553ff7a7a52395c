#include "proto/payload_pool.hpp"

namespace ks::proto {

PayloadPool::~PayloadPool() {
  // Payloads delete their attached extensions in their own destructor.
  for (auto& payload : all_) payload->set_mm(nullptr);
}

tlm::tlm_generic_payload* PayloadPool::acquire() {
  tlm::tlm_generic_payload* payload;
  if (free_.empty()) {
    all_.push_back(std::make_unique<tlm::tlm_generic_payload>(this));
    payload = all_.back().get();
  } else {
    payload = free_.back();
    free_.pop_back();
  }
  payload->set_command(tlm::TLM_IGNORE_COMMAND);
  payload->set_address(0);
  payload->set_data_ptr(nullptr);
  payload->set_data_length(0);
  payload->set_streaming_width(0);
  payload->set_byte_enable_ptr(nullptr);
  payload->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  payload->acquire();
  return payload;
}

void PayloadPool::free(tlm::tlm_generic_payload* payload) { free_.push_back(payload); }

}  // namespace ks::proto
