#pragma once
// A FIFO store of items (SimPy's Store): put() blocks while the store is full, get() blocks while
// it is empty. Waiting putters and getters are served strictly in arrival order.
#include <cstddef>
#include <deque>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "sc_modules/sim/environment.hpp"

namespace ks::sim {

template <class T>
class Store {
 public:
  static constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();

  explicit Store(Environment& env, std::size_t capacity = kUnbounded) : env_(env), capacity_(capacity) {
    if (capacity == 0) throw std::invalid_argument("store capacity must be at least 1");
  }
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Processed once the item is in the store.
  Event<void> put_event(T item) {
    Event<void> done(env_);
    putters_.emplace_back(std::move(item), done);
    settle();
    return done;
  }
  // Processed with the oldest item once one is available.
  Event<T> get_event() {
    Event<T> got(env_);
    getters_.push_back(got);
    settle();
    return got;
  }
  // Withdraws a get_event() that has not been served (e.g. after losing an any_of race).
  void cancel(const Event<T>& get) {
    for (auto it = getters_.begin(); it != getters_.end(); ++it) {
      if (it->core() == get.core()) {
        getters_.erase(it);
        return;
      }
    }
  }

  void put(T item) { put_event(std::move(item)).wait(); }
  T get() { return get_event().wait(); }
  // Takes an item if one is there, without waiting.
  std::optional<T> try_get() {
    if (items_.empty() || !getters_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    settle();
    return item;
  }

  std::size_t size() const { return items_.size(); }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return items_.empty(); }

 private:
  void settle() {
    bool progress = true;
    while (progress) {
      progress = false;
      if (!putters_.empty() && items_.size() < capacity_) {
        items_.push_back(std::move(putters_.front().first));
        Event<void> done = putters_.front().second;
        putters_.pop_front();
        done.succeed();
        progress = true;
      }
      if (!getters_.empty() && !items_.empty()) {
        Event<T> got = getters_.front();
        getters_.pop_front();
        T item = std::move(items_.front());
        items_.pop_front();
        got.succeed(std::move(item));
        progress = true;
      }
    }
  }

  Environment& env_;
  std::size_t capacity_;
  std::deque<T> items_;
  std::deque<std::pair<T, Event<void>>> putters_;
  std::deque<Event<T>> getters_;
};

}  // namespace ks::sim
