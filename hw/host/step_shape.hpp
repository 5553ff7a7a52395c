#pragma once
// StepShape is part of the engine-facing contract (proto/step_shape.hpp); the host's cost
// policies use it under its hw name.
#include "proto/step_shape.hpp"

namespace ks::hw {
using proto::StepShape;
using proto::step_shape;
}  // namespace ks::hw
