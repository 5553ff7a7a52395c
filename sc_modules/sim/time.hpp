#pragma once
// Simulated time is SystemC time (integer picoseconds, see kernel_setup.hpp); these helpers keep
// conversions in one place so serving code can think in seconds.
#include <systemc>

namespace ks::sim {

using Time = sc_core::sc_time;

// sc_time(s, SC_SEC)'s own arithmetic at the 1 ps resolution (s * 1e12 + 0.5, truncated), without
// its library call: the host converts several times per simulated step.
inline Time seconds(double s) {
  if (s > 0 && s < 1e7) return Time::from_value(static_cast<sc_dt::uint64>(s * 1e12 + 0.5));
  return sc_core::sc_time(s, sc_core::SC_SEC);
}
inline Time milliseconds(double ms) { return sc_core::sc_time(ms, sc_core::SC_MS); }
inline Time microseconds(double us) { return sc_core::sc_time(us, sc_core::SC_US); }
inline Time nanoseconds(double ns) { return sc_core::sc_time(ns, sc_core::SC_NS); }
// Exact for whole picoseconds (a division by 1e12 rounds once; sc_time::to_seconds multiplies by
// an inexact 1e-12). The resolution is fixed at 1 ps by setup_kernel().
inline double to_seconds(const Time& t) { return static_cast<double>(t.value()) / 1e12; }
inline Time zero_time() { return sc_core::SC_ZERO_TIME; }

}  // namespace ks::sim
