#include "hw/host/host_cpu.hpp"

#include <stdexcept>

#include "sc_modules/tlm/extensions.hpp"

namespace ks::hw {
namespace {
sc_core::sc_time seconds(double s) { return sc_core::sc_time(s, sc_core::SC_SEC); }
}  // namespace

HostCpu::HostCpu(const sc_core::sc_module_name& name, const config::Params& params)
    : sc_core::sc_module(name),
      gpu_socket("gpu_socket"),
      prepare_overhead_(seconds(params.number("prepare_overhead"))),
      finish_overhead_(seconds(params.number("finish_overhead"))),
      launch_overhead_(seconds(params.number("launch_overhead"))),
      step_granularity_(params.string("launch_granularity") == "step") {}

bool HostCpu::launch_step(const kernels::StepKernels& step, std::uint64_t step_id,
                          const std::vector<std::uint64_t>* request_ids, sc_core::sc_time& local) {
  proto::PooledPayload payload(step_pool_);
  auto& ext = proto::PayloadPool::extension<proto::StepLaunch>(*payload);
  ext.kernels = &step;
  ext.launch_overhead = launch_overhead_;
  ext.stream = 0;
  ext.step = step_id;
  ext.request_ids = request_ids;
  payload->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = local;
  gpu_socket->b_transport(*payload, delay);
  if (payload->get_response_status() == tlm::TLM_COMMAND_ERROR_RESPONSE) return false;
  if (payload->get_response_status() != tlm::TLM_OK_RESPONSE)
    throw std::runtime_error(std::string(name()) + ": GPU rejected step " + std::to_string(step_id));
  const std::size_t count = step.pre.size() + step.post.size() +
                            step.per_layer.size() * static_cast<std::size_t>(step.num_layers);
  local += launch_overhead_ * static_cast<double>(count);
  return true;
}

void HostCpu::launch(const kernels::Kernel& kernel, int layer, std::uint64_t step_id,
                     const std::vector<std::uint64_t>* request_ids, sc_core::sc_time& local) {
  local += launch_overhead_;
  proto::PooledPayload payload(launch_pool_);
  auto& ext = proto::PayloadPool::extension<proto::KernelLaunch>(*payload);
  ext.kernel = kernel;
  ext.stream = 0;
  ext.repeat = 1;
  ext.layer = layer;
  ext.step = step_id;
  ext.request_ids = request_ids;
  sc_core::sc_time delay = local;
  gpu_socket->b_transport(*payload, delay);
  if (payload->get_response_status() != tlm::TLM_OK_RESPONSE)
    throw std::runtime_error(std::string(name()) + ": GPU rejected kernel '" + kernel.name + "'");
}

StepTiming HostCpu::execute_step(const kernels::StepKernels& step, std::uint64_t step_id,
                                 const std::vector<std::uint64_t>* request_ids) {
  StepTiming timing;
  // Loosely timed: the host runs ahead in local time and synchronises once per step.
  sc_core::sc_time local = prepare_overhead_;
  timing.host_before = prepare_overhead_;
  if (step_granularity_) step_granularity_ = launch_step(step, step_id, request_ids, local);
  if (!step_granularity_) {
    for (const auto& k : step.pre) launch(k, -1, step_id, request_ids, local);
    for (int layer = 0; layer < step.num_layers; ++layer)
      for (const auto& k : step.per_layer) launch(k, layer, step_id, request_ids, local);
    for (const auto& k : step.post) launch(k, -1, step_id, request_ids, local);
  }
  timing.kernels = step.pre.size() + step.post.size() +
                   step.per_layer.size() * static_cast<std::size_t>(step.num_layers);
  timing.launch = local - timing.host_before;

  proto::PooledPayload sync(sync_pool_);
  proto::PayloadPool::extension<proto::Synchronize>(*sync).stream = -1;
  sc_core::sc_time after_gpu = local;
  gpu_socket->b_transport(*sync, after_gpu);
  timing.gpu_wait = after_gpu - local;
  timing.host_after = finish_overhead_;
  timing.total = after_gpu + finish_overhead_;

  ++steps_;
  sim::Environment::current().hold(timing.total);
  return timing;
}

namespace {
const bool registered = [] {
  config::Schema schema("Host CPU of a serving engine with fixed per-step and per-kernel costs.");
  schema
      .quantity("prepare_overhead", config::Dim::Time, std::string("500us"),
                "CPU time before a step's first launch: scheduling and input preparation", 0.0, false)
      .quantity("finish_overhead", config::Dim::Time, std::string("500us"),
                "CPU time after the GPU finishes a step: sampling, detokenisation, output processing",
                0.0, false)
      .quantity("launch_overhead", config::Dim::Time, std::string("4us"),
                "CPU time to launch one kernel (without CUDA graphs)", 0.0, false)
      .choice("launch_granularity", {"step", "kernel"}, std::string("step"),
              "TLM transactions per engine step: step (one, priced per kernel with the same timing and "
              "statistics) or kernel (one per kernel); see docs/performance.md");
  host_registry().add("fixed_overhead",
                      {schema.doc(), schema,
                       [](const std::string& name, const config::Params& params) {
                         return std::make_unique<HostCpu>(name.c_str(), params);
                       }});
  return true;
}();
}  // namespace

}  // namespace ks::hw
