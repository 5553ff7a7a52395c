#pragma once
namespace ks::sim {
// Fixes the SystemC time resolution (1 ps) before any sc_time exists. Call first in sc_main.
void setup_kernel();
}  // namespace ks::sim
