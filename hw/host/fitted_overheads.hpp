#pragma once
// HostOverheads from a fitted HostOverheadModel (kind `fitted`): the measured phases as linear
// functions of the step's sequences and TP, times a scale for a faster or slower host CPU.
#include "hw/host/host_overhead_model.hpp"
#include "hw/host/host_overheads.hpp"

namespace ks::hw {

class FittedHostOverheads : public HostOverheads {
 public:
  FittedHostOverheads(HostOverheadModel model, double scale) : model_(model), scale_(scale) {}
  double before_gpu_seconds(const StepShape& s) const override {
    return s.sequences == 0 ? 0.0 : scale_ * model_.before_gpu_seconds(s.sequences, s.tp);
  }
  double after_gpu_seconds(const StepShape& s) const override {
    return s.sequences == 0 ? 0.0 : scale_ * model_.after_gpu_seconds(s.sequences, s.tp);
  }
  const HostOverheadModel& model() const { return model_; }

 private:
  HostOverheadModel model_;
  double scale_;
};

}  // namespace ks::hw
