#include "sc_modules/sim/condition.hpp"

#include <memory>
#include <stdexcept>

namespace ks::sim {

Event<void> all_of(Environment& env, const std::vector<EventRef>& events) {
  Event<void> result(env);
  auto remaining = std::make_shared<std::size_t>(events.size());
  if (events.empty()) {
    result.succeed();
    return result;
  }
  for (const EventRef& event : events) {
    event.on_processed([result, remaining](detail::EventCore& e) mutable {
      if (result.triggered()) return;
      if (e.error) {
        result.fail(e.error);
      } else if (--*remaining == 0) {
        result.succeed();
      }
    });
  }
  return result;
}

Event<std::size_t> any_of(Environment& env, const std::vector<EventRef>& events) {
  if (events.empty()) throw std::invalid_argument("any_of needs at least one event");
  Event<std::size_t> result(env);
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].on_processed([result, i](detail::EventCore& e) mutable {
      if (result.triggered()) return;
      if (e.error)
        result.fail(e.error);
      else
        result.succeed(i);
    });
  }
  return result;
}

}  // namespace ks::sim
