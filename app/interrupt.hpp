#pragma once
// SIGINT / SIGTERM during `kernelsight run`: the handler only records the signal; the run loop
// polls it between slices of simulated time, stops the simulation there, writes the results so
// far (summary.json marked "partial") and exits with 128 + the signal number (130, 143).
// A second signal is not caught: it ends the process at once (atomic writes keep files whole).
#include <csignal>

namespace ks::app {

// Installs the handlers (once per process).
void catch_stop_signals();
// The signal received since catch_stop_signals(), or 0.
int stop_signal();
// "SIGINT", "SIGTERM".
const char* signal_name(int sig);

}  // namespace ks::app
