#pragma once
// The host CPU time of a step outside kernel launches: before the first launch (scheduling, input
// preparation) and after the GPU finishes (sampling, output processing). One implementation per
// host kind; pure C++ so each can be tested without a simulation.
#include "hw/host/step_shape.hpp"

namespace ks::hw {

class HostOverheads {
 public:
  virtual ~HostOverheads() = default;
  virtual double before_gpu_seconds(const StepShape& shape) const = 0;
  virtual double after_gpu_seconds(const StepShape& shape) const = 0;
};

// Same cost every step (kind `fixed_overhead`).
class FixedHostOverheads : public HostOverheads {
 public:
  FixedHostOverheads(double before_s, double after_s) : before_s_(before_s), after_s_(after_s) {}
  double before_gpu_seconds(const StepShape&) const override { return before_s_; }
  double after_gpu_seconds(const StepShape&) const override { return after_s_; }

 private:
  double before_s_, after_s_;
};

}  // namespace ks::hw
