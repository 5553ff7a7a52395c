#include "hw/host/host_cpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "proto/extensions.hpp"
#include "sc_modules/sim/time.hpp"

namespace ks::hw {
namespace {
// The initiator's time after a transaction, relative to sc_time_stamp() (TLM-2.0: the target may
// have spent simulated time in wait() and/or returned a larger delay). `before` is the absolute
// time the transaction was issued at; the host never goes back before it.
sc_core::sc_time after_transport(const sc_core::sc_time& before, const sc_core::sc_time& returned) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time at = now + returned;
  return at > before ? returned : before - now;
}
void set_request_ids(std::vector<std::uint64_t>& out, const std::vector<std::uint64_t>* ids) {
  if (ids == nullptr)
    out.clear();
  else
    out.assign(ids->begin(), ids->end());
}
}  // namespace

HostCpu::HostCpu(const sc_core::sc_module_name& name, LaunchPolicy launch)
    : sc_core::sc_module(name),
      gpu_socket("gpu_socket"),
      launch_policy_(launch),
      launch_overhead_(sim::seconds(launch.per_kernel_s)),
      graph_launch_overhead_(sim::seconds(launch.graph_launch_s)),
      step_granularity_(launch.step_granularity) {}

bool HostCpu::launch_step(const kernels::StepKernels& step, std::uint64_t step_id,
                          const std::vector<std::uint64_t>* request_ids, const sc_core::sc_time& per_kernel,
                          sc_core::sc_time& local) {
  proto::PooledPayload payload(step_pool_);
  auto& ext = proto::PayloadPool::extension<proto::StepLaunch>(*payload);
  ext.kernels = step;  // shares the step's chunks: a few pointers
  ext.launch_overhead = per_kernel;
  ext.stream = 0;
  ext.step = step_id;
  set_request_ids(ext.request_ids, request_ids);
  payload->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const sc_core::sc_time issued = sc_core::sc_time_stamp() + local;
  sc_core::sc_time delay = local;
  gpu_socket->b_transport(*payload, delay);
  local = after_transport(issued, delay);
  if (payload->get_response_status() == tlm::TLM_COMMAND_ERROR_RESPONSE) return false;
  if (payload->get_response_status() != tlm::TLM_OK_RESPONSE)
    throw std::runtime_error(std::string(name()) + ": GPU rejected step " + std::to_string(step_id));
  const std::size_t count = step.pre.size() + step.post.size() +
                            step.per_layer.size() * static_cast<std::size_t>(step.num_layers);
  local += per_kernel * static_cast<double>(count);
  return true;
}

void HostCpu::launch(const kernels::Kernel& kernel, int layer, std::uint64_t step_id,
                     const std::vector<std::uint64_t>* request_ids, const sc_core::sc_time& per_kernel,
                     sc_core::sc_time& local) {
  local += per_kernel;
  proto::PooledPayload payload(launch_pool_);
  auto& ext = proto::PayloadPool::extension<proto::KernelLaunch>(*payload);
  ext.kernel = kernel;
  ext.stream = 0;
  ext.repeat = 1;
  ext.layer = layer;
  ext.step = step_id;
  set_request_ids(ext.request_ids, request_ids);
  const sc_core::sc_time issued = sc_core::sc_time_stamp() + local;
  sc_core::sc_time delay = local;
  gpu_socket->b_transport(*payload, delay);
  local = after_transport(issued, delay);  // a target may take time to accept a launch
  if (payload->get_response_status() != tlm::TLM_OK_RESPONSE)
    throw std::runtime_error(std::string(name()) + ": GPU rejected kernel '" + kernel.name + "'");
}

StepTiming HostCpu::execute_step(const kernels::StepKernels& step, const StepShape& shape, std::uint64_t step_id,
                                 const std::vector<std::uint64_t>* request_ids, HostPhases phases) {
  StepTiming timing;
  timing.kernels = step.pre.size() + step.post.size() +
                   step.per_layer.size() * static_cast<std::size_t>(step.num_layers);
  // Loosely timed: the host runs ahead of sc_time_stamp() in local time (the annotated delay) and
  // synchronises once per step. A GPU may also spend simulated time inside b_transport (wait(),
  // e.g. a Synchronize that blocks until its own SC_THREADs are done): after every transaction
  // the host's time is sc_time_stamp() + the returned delay, and the step's phases are measured
  // between absolute times from `start`, so time spent inside a target is counted once.
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  timing.host_before = phases.prepare_s > 0 ? sim::seconds(phases.prepare_s) : sc_core::SC_ZERO_TIME;
  sc_core::sc_time local = timing.host_before;
  // A graph replay costs the host one launch up front; its kernels reach the GPU together.
  timing.cuda_graph = timing.kernels > 0 && launch_policy_.uses_graph(shape);
  if (timing.cuda_graph) local += graph_launch_overhead_;
  const sc_core::sc_time per_kernel = timing.cuda_graph ? sc_core::SC_ZERO_TIME : launch_overhead_;
  // One transaction per step unless the target cannot take it (TP groups) or the run is traced
  // (the timeline needs every kernel's own start and finish).
  bool as_step = step_granularity_ && trace_ == nullptr;
  if (as_step) as_step = step_granularity_ = launch_step(step, step_id, request_ids, per_kernel, local);
  if (as_step) ++whole_steps_;
  if (!as_step) {
    for (const auto& k : step.pre) launch(k, -1, step_id, request_ids, per_kernel, local);
    for (int layer = 0; layer < step.num_layers; ++layer)
      for (const auto& k : step.per_layer) launch(k, layer, step_id, request_ids, per_kernel, local);
    for (const auto& k : step.post) launch(k, -1, step_id, request_ids, per_kernel, local);
  }
  const sc_core::sc_time launched = sc_core::sc_time_stamp() + local;  // absolute
  timing.launch = launched - start - timing.host_before;

  proto::PooledPayload sync(sync_pool_);
  proto::PayloadPool::extension<proto::Synchronize>(*sync).stream = -1;
  sc_core::sc_time after_gpu = local;
  gpu_socket->b_transport(*sync, after_gpu);
  if (sync->get_response_status() != tlm::TLM_OK_RESPONSE)
    throw std::runtime_error(std::string(name()) + ": GPU rejected the synchronisation of step " +
                             std::to_string(step_id));
  const sc_core::sc_time gpu_done = sc_core::sc_time_stamp() + after_transport(launched, after_gpu);
  timing.gpu_wait = gpu_done - launched;
  timing.host_after = phases.finish_s > 0 ? sim::seconds(phases.finish_s) : sc_core::SC_ZERO_TIME;
  const sc_core::sc_time end = gpu_done + timing.host_after;
  timing.total = end - start;

  ++steps_;
  if (trace_ != nullptr) trace_step(timing, step_id, start);
  sim::Environment::current().hold(end - sc_core::sc_time_stamp());
  return timing;
}

void HostCpu::trace_step(const StepTiming& t, std::uint64_t step_id, const sc_core::sc_time& step_start) const {
  // sc_time values are picoseconds (sim::setup_kernel fixes the resolution); the phases tile the step.
  const std::uint64_t start = step_start.value();
  const std::string args = "{\"step\":" + std::to_string(step_id) + ",\"kernels\":" + std::to_string(t.kernels) + "}";
  trace_->span(trace_track_, "step " + std::to_string(step_id), "step", start, start + t.total.value(), args);
  if (!trace_->detailed(step_id)) return;
  std::uint64_t at = start;
  for (const auto& [name, d] : {std::pair<const char*, sc_core::sc_time>{"prepare", t.host_before},
                                {"launch", t.launch}, {"wait", t.gpu_wait}, {"finish", t.host_after}}) {
    trace_->span(trace_track_, name, "host", at, at + d.value());
    at += d.value();
  }
}

}  // namespace ks::hw
