#pragma once
// The SimPy-style layer in one include.
#include "sc_modules/sim/condition.hpp"
#include "sc_modules/sim/container.hpp"
#include "sc_modules/sim/environment.hpp"
#include "sc_modules/sim/event.hpp"
#include "sc_modules/sim/kernel_setup.hpp"
#include "sc_modules/sim/resource.hpp"
#include "sc_modules/sim/store.hpp"
#include "sc_modules/sim/time.hpp"
