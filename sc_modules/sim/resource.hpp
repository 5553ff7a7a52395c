#pragma once
// Resources with a capacity, as in SimPy: a process requests a slot, waits until it is granted,
// and releases it. Requests are RAII handles: leaving scope releases a granted slot or withdraws
// a waiting request. Resource grants in FIFO order; PriorityResource by (priority, arrival order),
// lower priority values first, without preemption.
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>

#include "sc_modules/sim/environment.hpp"

namespace ks::sim {

class ResourceBase;

class Request {
 public:
  Request() = default;
  Request(Request&& other) noexcept;
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  // Blocks the calling process until the slot is granted.
  void wait();
  bool granted() const;
  // Processed when the slot is granted (for any_of with a timeout, say).
  const Event<void>& event() const { return granted_; }
  // Gives the slot back (or withdraws the request); idempotent.
  void release();

 private:
  friend class ResourceBase;
  Request(ResourceBase* owner, Event<void> granted, std::uint64_t id)
      : owner_(owner), granted_(std::move(granted)), id_(id) {}
  ResourceBase* owner_ = nullptr;
  Event<void> granted_;
  std::uint64_t id_ = 0;
};

class ResourceBase {
 public:
  ResourceBase(Environment& env, std::size_t capacity);
  virtual ~ResourceBase() = default;
  ResourceBase(const ResourceBase&) = delete;
  ResourceBase& operator=(const ResourceBase&) = delete;

  std::size_t capacity() const { return capacity_; }
  std::size_t count() const { return users_; }          // slots in use
  std::size_t queue_length() const { return waiting_.size(); }

 protected:
  Request enqueue(int priority);

 private:
  friend class Request;
  struct Waiter {
    int priority;
    std::uint64_t id;
    Event<void> granted;
  };
  void release(std::uint64_t id, bool was_granted);
  void grant_waiting();

  Environment& env_;
  std::size_t capacity_;
  std::size_t users_ = 0;
  std::uint64_t next_id_ = 1;
  std::list<Waiter> waiting_;  // sorted by (priority, id)
};

class Resource : public ResourceBase {
 public:
  using ResourceBase::ResourceBase;
  Request request() { return enqueue(0); }
  // request() and wait() in one call.
  Request acquire() {
    Request r = request();
    r.wait();
    return r;
  }
};

class PriorityResource : public ResourceBase {
 public:
  using ResourceBase::ResourceBase;
  Request request(int priority) { return enqueue(priority); }
  Request acquire(int priority) {
    Request r = request(priority);
    r.wait();
    return r;
  }
};

}  // namespace ks::sim
