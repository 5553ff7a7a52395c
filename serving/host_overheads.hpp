#pragma once
// The engine's software overheads per step, paid on the host CPU outside kernel launches: before
// the first launch (scheduling, input preparation) and after the GPU finishes (sampling,
// detokenisation, output processing). They belong to the serving engine, not to the hardware: the
// Replica computes them for each step and hands the seconds to the host in proto::HostPhases; the
// host (hw/host) adds only what is hardware (kernel launches, CUDA graphs) and the GPU's time.
//
// One implementation per kind, chosen by `hardware.host.kind` (the engine profile sets it: vLLM's
// profiles pick `fitted`); its keys sit in the `hardware.host` section next to the host's launch
// keys, so every scenario reads as before. Pure C++: each kind is tested without a simulation.
#include <memory>
#include <string>

#include "base/config/schema.hpp"
#include "base/registry/registry.hpp"
#include "proto/step_shape.hpp"
#include "serving/host_overhead_model.hpp"

namespace ks::serving {

using proto::StepShape;

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

// From a fitted HostOverheadModel (kind `fitted`): the measured phases as linear functions of the
// step's sequences and TP, times a scale for a faster or slower host CPU.
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

// The kinds of `hardware.host` (category "host"). An entry's schema holds the engine-overhead keys
// only; the app appends the host's launch keys (hw/host/launch_policy.hpp) to resolve the section
// and to describe it. A plug-in adds a kind here.
using HostOverheadsRegistry = registry::Registry<HostOverheads, const config::Params&>;
inline HostOverheadsRegistry& host_overheads_registry() { return HostOverheadsRegistry::instance("host"); }

}  // namespace ks::serving
