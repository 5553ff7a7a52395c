// sc_main for simulation tests: libsystemc needs an sc_main symbol, and the time resolution must
// be fixed before any sc_time is built (including those inside EXPECT_* arguments).
#include <gtest/gtest.h>
#include <systemc>

#include "sc_modules/sim/kernel_setup.hpp"

int sc_main(int argc, char* argv[]) {
  ks::sim::setup_kernel();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
