#include "sc_modules/sim/container.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ks::sim {

Container::Container(Environment& env, double capacity, double initial)
    : env_(env), capacity_(capacity), level_(initial) {
  if (!(capacity > 0)) throw std::invalid_argument("container capacity must be > 0");
  if (!(initial >= 0 && initial <= capacity))
    throw std::invalid_argument("container initial level must lie in [0, capacity]");
}

void Container::check_amount(double amount) const {
  if (!(amount > 0) || std::isinf(amount))
    throw std::invalid_argument("container amount must be a positive finite number, got " +
                                std::to_string(amount));
  if (amount > capacity_)
    throw std::invalid_argument("container amount " + std::to_string(amount) +
                                " exceeds the capacity " + std::to_string(capacity_));
}

Event<void> Container::put_event(double amount) {
  check_amount(amount);
  Event<void> done(env_);
  puts_.push_back({amount, done});
  settle();
  return done;
}

Event<void> Container::get_event(double amount) {
  check_amount(amount);
  Event<void> done(env_);
  gets_.push_back({amount, done});
  settle();
  return done;
}

bool Container::try_get(double amount) {
  check_amount(amount);
  if (!gets_.empty() || level_ < amount) return false;
  level_ -= amount;
  settle();  // a waiting put may fit now
  return true;
}

void Container::settle() {
  bool progress = true;
  while (progress) {
    progress = false;
    if (!puts_.empty() && level_ + puts_.front().amount <= capacity_) {
      level_ += puts_.front().amount;
      Event<void> done = puts_.front().done;
      puts_.pop_front();
      done.succeed();
      progress = true;
    }
    if (!gets_.empty() && level_ >= gets_.front().amount) {
      level_ -= gets_.front().amount;
      Event<void> done = gets_.front().done;
      gets_.pop_front();
      done.succeed();
      progress = true;
    }
  }
}

}  // namespace ks::sim
