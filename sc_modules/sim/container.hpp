#pragma once
// A continuous or discrete amount with a capacity (SimPy's Container), e.g. KV-cache memory.
// put(a) blocks until level + a <= capacity; get(a) blocks until level >= a. Waiting requests are
// served strictly in arrival order: a large get at the head holds back smaller ones behind it.
#include <deque>
#include <limits>

#include "sc_modules/sim/environment.hpp"

namespace ks::sim {

class Container {
 public:
  Container(Environment& env, double capacity = std::numeric_limits<double>::infinity(),
            double initial = 0.0);
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;

  Event<void> put_event(double amount);
  Event<void> get_event(double amount);
  void put(double amount) { put_event(amount).wait(); }
  void get(double amount) { get_event(amount).wait(); }
  // Takes `amount` at once if the level holds it and no get waits before it; else false and
  // nothing changes (Store::try_get's counterpart: no trip through the agenda).
  bool try_get(double amount);

  double level() const { return level_; }
  double capacity() const { return capacity_; }

 private:
  struct Pending {
    double amount;
    Event<void> done;
  };
  void check_amount(double amount) const;
  void settle();

  Environment& env_;
  double capacity_;
  double level_;
  std::deque<Pending> puts_;
  std::deque<Pending> gets_;
};

}  // namespace ks::sim
