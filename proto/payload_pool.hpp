#pragma once
// A pool of generic payloads (tlm_mm_interface) for hot paths: no allocation per transaction.
// Extensions stay attached across reuse; get_extension<T>() attaches one the first time.
#include <memory>
#include <vector>

#include <tlm>

namespace ks::proto {

class PayloadPool final : public tlm::tlm_mm_interface {
 public:
  PayloadPool() = default;
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;
  ~PayloadPool() override;

  // A payload with reference count 1 and its memory manager set; release() returns it here.
  tlm::tlm_generic_payload* acquire();
  // Called by tlm_generic_payload::release() when the count drops to zero.
  void free(tlm::tlm_generic_payload* payload) override;

  std::size_t allocated() const { return all_.size(); }
  std::size_t available() const { return free_.size(); }

  // The payload's extension of type T, attached on first use and kept for reuse.
  template <class T>
  static T& extension(tlm::tlm_generic_payload& payload) {
    T* ext = payload.get_extension<T>();
    if (ext == nullptr) {
      ext = new T();
      payload.set_extension(ext);
    }
    return *ext;
  }

 private:
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> all_;
  std::vector<tlm::tlm_generic_payload*> free_;
};

// RAII: acquire on construction, release on destruction.
class PooledPayload {
 public:
  explicit PooledPayload(PayloadPool& pool) : payload_(pool.acquire()) {}
  ~PooledPayload() { payload_->release(); }
  PooledPayload(const PooledPayload&) = delete;
  PooledPayload& operator=(const PooledPayload&) = delete;
  tlm::tlm_generic_payload& operator*() const { return *payload_; }
  tlm::tlm_generic_payload* operator->() const { return payload_; }
  tlm::tlm_generic_payload* get() const { return payload_; }

 private:
  tlm::tlm_generic_payload* payload_;
};

}  // namespace ks::proto
