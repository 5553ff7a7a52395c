#pragma once
// Condition events over other events (SimPy's AllOf / AnyOf).
#include <cstddef>
#include <vector>

#include "sc_modules/sim/environment.hpp"

namespace ks::sim {

// Processed once every event is processed; fails with the first failure among them.
// An empty list succeeds at once.
Event<void> all_of(Environment& env, const std::vector<EventRef>& events);

// Processed when the first of the events is processed; its value is that event's index in
// `events` (ties at the same time resolve by agenda order). Fails if that first event failed.
Event<std::size_t> any_of(Environment& env, const std::vector<EventRef>& events);

}  // namespace ks::sim
