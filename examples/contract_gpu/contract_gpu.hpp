#pragma once
// Example (1) of issue 18: a GPU written only against KernelSight's TLM contract (proto/), with
// no KernelSight base class. It is what a SystemC modeller writes to plug in their own GPU:
//   * one target socket of the GPU protocol (proto::GpuTargetSocket), nothing else;
//   * KernelLaunch is accepted at once and queued; an SC_THREAD serves the queue in launch order,
//     each kernel taking launch_latency + flops / peak_flops of simulated time (wait() in the
//     thread), starting no earlier than its issue time (sc_time_stamp() + the annotated delay);
//   * Synchronize consumes simulated time inside b_transport: it first waits out the initiator's
//     annotated delay (delay becomes zero), then waits until the queue is empty, so it returns
//     exactly when the GPU's work is done. The host takes sc_time_stamp() + delay on return as
//     the completion (hw/host/host_cpu.cpp);
//   * StreamWait holds later kernels back until its time; anything else (e.g. a StepLaunch) is
//     answered with TLM_COMMAND_ERROR_RESPONSE, and the host falls back to kernel launches.
//   * statistics go to the sink it is given (proto/kernel_stats.hpp; the app hands one to every
//     GPU, `GpuArgs::stats` for a plug-in): each kernel adds one launch to its row when it is
//     done, so it shows up in kernels.csv like a built-in GPU's kernels.
// One in-order engine: every stream shares it (a deliberately simple queueing model). KernelLaunch
// start/finish are left unset: completion is observed with Synchronize only.
#include <cmath>
#include <cstdint>
#include <deque>

#include <systemc>
#include <tlm>

#include "proto/extensions.hpp"
#include "proto/kernel_stats.hpp"
#include "proto/kernel_trace.hpp"
#include "proto/protocol.hpp"

namespace contract_gpu {

class ContractGpu : public sc_core::sc_module {
 public:
  ks::proto::GpuTargetSocket<ContractGpu> socket{"socket"};

  SC_HAS_PROCESS(ContractGpu);
  // `stats`, `trace`: where finished kernels are reported, as statistics and as timeline spans
  // (null: nowhere).
  ContractGpu(const sc_core::sc_module_name& name, double peak_flops, sc_core::sc_time launch_latency,
              ks::proto::KernelStatsSink* stats = nullptr, ks::proto::KernelTraceSink* trace = nullptr)
      : sc_core::sc_module(name), peak_flops_(peak_flops), launch_latency_(launch_latency), stats_(stats),
        trace_(trace) {
    socket.register_b_transport(this, &ContractGpu::b_transport);
    SC_THREAD(serve);
  }

  // Time one kernel of `flops` takes on the engine.
  sc_core::sc_time kernel_time(double flops) const {
    return launch_latency_ + sc_core::sc_time(flops / peak_flops_, sc_core::SC_SEC);
  }
  std::uint64_t kernels_done() const { return kernels_done_; }
  std::uint64_t synchronizations() const { return syncs_; }
  sc_core::sc_time busy() const { return busy_; }

 private:
  struct Job {
    sc_core::sc_time not_before;  // issue time (absolute)
    sc_core::sc_time duration;
    bool kernel;  // false: a StreamWait marker
    ks::kernels::Kernel what{};  // the kernel (for statistics and the trace)
    int stream = 0, layer = -1;
    std::uint64_t step = 0;
  };

  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    const sc_core::sc_time issue = sc_core::sc_time_stamp() + delay;
    if (auto* k = p.get_extension<ks::proto::KernelLaunch>()) {
      for (int i = 0; i < k->repeat; ++i)
        queue_.push_back({issue, kernel_time(k->kernel.flops), true, k->kernel, k->stream, k->layer, k->step});
      queued_.notify();
    } else if (auto* w = p.get_extension<ks::proto::StreamWait>()) {
      queue_.push_back({w->until > issue ? w->until : issue, sc_core::SC_ZERO_TIME, false});
      queued_.notify();
    } else if (p.get_extension<ks::proto::Synchronize>() != nullptr) {
      ++syncs_;
      wait(delay);  // catch up with the initiator's local time ...
      delay = sc_core::SC_ZERO_TIME;
      while (!queue_.empty()) wait(idle_);  // ... then block until every queued kernel is done
    } else {
      p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    }
  }

  void serve() {
    for (;;) {
      while (queue_.empty()) wait(queued_);
      const Job job = queue_.front();
      if (job.not_before > sc_core::sc_time_stamp()) wait(job.not_before - sc_core::sc_time_stamp());
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      if (job.duration > sc_core::SC_ZERO_TIME) wait(job.duration);
      if (job.kernel) {
        busy_ += job.duration;
        ++kernels_done_;
        if (stats_ != nullptr) report(job);
        if (trace_ != nullptr && trace_->recording())
          trace_->kernel({job.what, cost(job), job.stream, job.layer, 1, job.step, start, sc_core::sc_time_stamp()});
      }
      queue_.pop_front();
      if (queue_.empty()) idle_.notify();
    }
  }

  // Compute-bound by construction: its time is the launch latency plus the FLOPs at peak.
  ks::kernels::KernelCost cost(const Job& job) const {
    const double launch = launch_latency_.to_seconds(), seconds = job.duration.to_seconds();
    return {seconds, seconds - launch, 0.0, launch, ks::kernels::Bound::Compute, 1.0};
  }
  void report(const Job& job) { stats_->row({job.what.name, job.what.op, job.what.phase}).add(job.what, cost(job), 1); }

  double peak_flops_;
  sc_core::sc_time launch_latency_;
  ks::proto::KernelStatsSink* stats_;
  ks::proto::KernelTraceSink* trace_;
  std::deque<Job> queue_;
  sc_core::sc_event queued_, idle_;
  std::uint64_t kernels_done_ = 0;
  std::uint64_t syncs_ = 0;
  sc_core::sc_time busy_;
};

}  // namespace contract_gpu
