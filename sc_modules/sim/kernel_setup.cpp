#include "sc_modules/sim/kernel_setup.hpp"

#include <systemc>

namespace ks::sim {
void setup_kernel() {
  // The resolution freezes at the first non-zero sc_time; 1 ps keeps integer time exact for
  // nanosecond-scale kernels and still covers ~213 days of simulated time in 64 bits.
  static bool done = false;
  if (done) return;
  done = true;
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  // Silence the copyright banner: outputs must be byte-identical and clean.
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
}
}  // namespace ks::sim
