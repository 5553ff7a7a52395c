#pragma once

namespace ks::sim {

// Tells AddressSanitizer that the code now runs on the thread's own stack again after sc_start()
// returned (a no-op in builds without ASan). Why: sanitizer_stack_switch.cpp.
void resync_sanitizer_stack_after_simulation();

}  // namespace ks::sim
