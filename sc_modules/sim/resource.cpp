#include "sc_modules/sim/resource.hpp"

#include <stdexcept>

namespace ks::sim {

Request::Request(Request&& other) noexcept
    : owner_(other.owner_), granted_(std::move(other.granted_)), id_(other.id_) {
  other.owner_ = nullptr;
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = other.owner_;
    granted_ = std::move(other.granted_);
    id_ = other.id_;
    other.owner_ = nullptr;
  }
  return *this;
}

Request::~Request() { release(); }

void Request::wait() {
  if (owner_ == nullptr) throw std::logic_error("waiting on a released resource request");
  granted_.wait();
}

bool Request::granted() const { return owner_ != nullptr && granted_.triggered(); }

void Request::release() {
  if (owner_ == nullptr) return;
  ResourceBase* owner = owner_;
  owner_ = nullptr;
  owner->release(id_, granted_.triggered());
}

ResourceBase::ResourceBase(Environment& env, std::size_t capacity) : env_(env), capacity_(capacity) {
  if (capacity == 0) throw std::invalid_argument("resource capacity must be at least 1");
}

Request ResourceBase::enqueue(int priority) {
  Event<void> granted(env_);
  const std::uint64_t id = next_id_++;
  auto pos = waiting_.begin();
  while (pos != waiting_.end() && pos->priority <= priority) ++pos;
  waiting_.insert(pos, Waiter{priority, id, granted});
  grant_waiting();
  return Request(this, granted, id);
}

void ResourceBase::release(std::uint64_t id, bool was_granted) {
  if (was_granted) {
    --users_;
    grant_waiting();
    return;
  }
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (it->id == id) {
      waiting_.erase(it);
      return;
    }
  }
}

void ResourceBase::grant_waiting() {
  while (users_ < capacity_ && !waiting_.empty()) {
    ++users_;
    Event<void> granted = waiting_.front().granted;
    waiting_.pop_front();
    granted.succeed();
  }
}

}  // namespace ks::sim
