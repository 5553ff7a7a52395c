#pragma once
// Events that carry a value, as in SimPy. An event is pending until succeed()/fail() triggers it;
// it is *processed* when the environment's agenda reaches it, at which point its callbacks run in
// the order they were added (waiting processes resume in the order they started waiting).
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace ks::sim {

class Environment;

// Same-time ordering: the agenda is ordered by (time, priority, sequence number). Lower priority
// values go first; equal priorities keep the order in which they were scheduled.
enum Priority : int { kUrgent = 0, kNormal = 1 };

namespace detail {

struct EventCore : std::enable_shared_from_this<EventCore> {
  enum class State { Pending, Triggered, Processed };

  explicit EventCore(Environment& e) : env(&e) {}
  virtual ~EventCore() = default;

  // Marks the event triggered and schedules its processing at the current time.
  void trigger(int priority);
  // Runs when the agenda reaches the event.
  void process();
  // Blocks the calling process until processed; rethrows a failure.
  void wait_processed();

  Environment* env;
  State state = State::Pending;
  std::exception_ptr error;
  std::vector<std::function<void(EventCore&)>> callbacks;
};

template <class T>
struct ValueEvent : EventCore {
  using EventCore::EventCore;
  std::optional<T> value;
};

}  // namespace detail

// A type-erased handle, used by all_of/any_of and anything that only needs "did it happen".
class EventRef {
 public:
  EventRef() = default;
  explicit EventRef(std::shared_ptr<detail::EventCore> core) : core_(std::move(core)) {}

  bool valid() const { return core_ != nullptr; }
  bool triggered() const { return core_->state != detail::EventCore::State::Pending; }
  bool processed() const { return core_->state == detail::EventCore::State::Processed; }
  bool ok() const { return triggered() && !core_->error; }
  // Runs fn(event) when the event is processed (immediately if it already was).
  void on_processed(std::function<void(detail::EventCore&)> fn) const;
  const std::shared_ptr<detail::EventCore>& core() const { return core_; }

 protected:
  std::shared_ptr<detail::EventCore> core_;
};

template <class T = void>
class Event : public EventRef {
 public:
  Event() = default;
  explicit Event(Environment& env) : EventRef(std::make_shared<detail::ValueEvent<T>>(env)) {}

  // Triggers with a value; the event is processed at the current time (after earlier items).
  void succeed(T value, int priority = kNormal) {
    check_pending();
    state()->value = std::move(value);
    core_->trigger(priority);
  }
  void fail(std::exception_ptr error, int priority = kNormal) {
    check_pending();
    core_->error = std::move(error);
    core_->trigger(priority);
  }
  // Blocks the calling process until the event is processed, then returns its value.
  T wait() {
    core_->wait_processed();
    return *state()->value;
  }
  // The value of a processed, successful event.
  const T& value() const {
    if (!processed()) throw std::logic_error("event value read before the event was processed");
    if (core_->error) std::rethrow_exception(core_->error);
    return *state()->value;
  }

 private:
  detail::ValueEvent<T>* state() const { return static_cast<detail::ValueEvent<T>*>(core_.get()); }
  void check_pending() const {
    if (triggered()) throw std::logic_error("event triggered twice");
  }
};

template <>
class Event<void> : public EventRef {
 public:
  Event() = default;
  explicit Event(Environment& env) : EventRef(std::make_shared<detail::EventCore>(env)) {}
  explicit Event(std::shared_ptr<detail::EventCore> core) : EventRef(std::move(core)) {}

  void succeed(int priority = kNormal) {
    check_pending();
    core_->trigger(priority);
  }
  void fail(std::exception_ptr error, int priority = kNormal) {
    check_pending();
    core_->error = std::move(error);
    core_->trigger(priority);
  }
  void wait() { core_->wait_processed(); }

 private:
  void check_pending() const {
    if (triggered()) throw std::logic_error("event triggered twice");
  }
};

}  // namespace ks::sim
