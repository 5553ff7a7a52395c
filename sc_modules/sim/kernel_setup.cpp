#include "sc_modules/sim/kernel_setup.hpp"

#include <cstdlib>

#include <systemc>

namespace ks::sim {
namespace {
// libsystemc prints its copyright banner from its own main(), before sc_main runs, unless this
// variable is set; a static initialiser is the only hook that early. The banner would otherwise
// land in users' outputs.
const bool g_banner_disabled = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1) == 0; }();
}  // namespace

void setup_kernel() {
  (void)g_banner_disabled;
  // The resolution freezes at the first non-zero sc_time; 1 ps keeps integer time exact for
  // nanosecond-scale kernels and still covers ~213 days of simulated time in 64 bits.
  static bool done = false;
  if (done) return;
  done = true;
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
}
}  // namespace ks::sim
