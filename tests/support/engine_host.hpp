#pragma once
// Test helper: a host CPU module with the engine's overheads of a `hardware.host` kind, built as the
// app builds them (the section resolved against the kind's overhead keys plus the host's launch
// keys). run_step hands the host both phases' seconds, as a one-stage Replica does.
#include <memory>
#include <string>
#include <vector>

#include "hw/host/host_cpu.hpp"
#include "hw/host/launch_policy.hpp"
#include "serving/host_overheads.hpp"
#include "tests/support/schema_params.hpp"

namespace ks::test_support {

inline config::Params host_params(const std::string& yaml, const std::string& kind) {
  config::Schema schema = serving::host_overheads_registry().get(kind, {}, "host").schema;
  hw::add_launch_params(schema);
  return resolve_params(yaml, schema);
}

class EngineHost : public hw::HostCpu {
 public:
  EngineHost(const config::Params& params, const std::string& kind)
      : hw::HostCpu("host", hw::launch_policy(params)),
        overheads_(serving::host_overheads_registry().get(kind, {}, "host").make(params)) {}

  proto::StepTiming run_step(const kernels::StepKernels& step, const proto::StepShape& shape, std::uint64_t step_id,
                             const std::vector<std::uint64_t>* request_ids = nullptr) {
    return execute_step(step, shape, step_id, request_ids,
                        {overheads_->before_gpu_seconds(shape), overheads_->after_gpu_seconds(shape)});
  }
  const serving::HostOverheads& overheads() const { return *overheads_; }

 private:
  std::unique_ptr<serving::HostOverheads> overheads_;
};

inline std::unique_ptr<EngineHost> make_engine_host(const std::string& yaml, const std::string& kind = "fixed_overhead") {
  return std::make_unique<EngineHost>(host_params(yaml, kind), kind);
}

}  // namespace ks::test_support
