#pragma once
// The GPU as a TLM target. Hosts (and co-simulated models) launch kernels on its socket; each
// stream executes its kernels in order, asynchronously to the launcher, so a host that issues
// faster than the GPU computes runs ahead and a GPU that computes faster waits for launches.
// Subclasses (registered GPU kinds) decide what a kernel costs; a hypothetical GPU written as a
// SystemC model can instead override b_transport and model the kernel however it likes.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <systemc>
#include <tsl/robin_map.h>

#include "kernels/gpu_spec.hpp"
#include "kernels/kernel.hpp"
#include "kernels/roofline.hpp"
#include "base/config/schema.hpp"
#include "base/registry/registry.hpp"
#include "proto/extensions.hpp"
#include "proto/kernel_stats.hpp"
#include "proto/protocol.hpp"
#include "proto/kernel_trace.hpp"

namespace ks::hw {

class GpuModule : public sc_core::sc_module {
 public:
  static constexpr int kMaxStreams = 8;

  proto::GpuTargetSocket<GpuModule> socket;

  GpuModule(const sc_core::sc_module_name& name, int device_id);
  ~GpuModule() override = default;

  int device_id() const { return device_id_; }
  virtual const kernels::GpuSpec& spec() const = 0;
  // Time of one kernel on this GPU.
  virtual kernels::KernelCost kernel_cost(const kernels::Kernel& kernel) const = 0;
  // True when kernel_cost is a pure function of the kernel and may be remembered: a step launch
  // then reuses the previous step's price of a kernel that did not change (same position, same
  // shape), skipping the lookup. Off by default: a kind's costs may depend on its state.
  virtual bool reuses_kernel_costs() const { return false; }
  // A hint that kernel_cost(kernel) follows soon: a step launch gives it for each kernel it is
  // about to price, so that a memoised model can fetch them all before the first is needed.
  virtual void will_price(const kernels::Kernel& kernel) const { (void)kernel; }

  // When everything issued so far to `stream` (-1: all streams) will have finished.
  sc_core::sc_time stream_free_at(int stream) const;
  double busy_seconds() const { return static_cast<double>(busy_ps_) * 1e-12; }
  std::uint64_t kernels_executed() const { return kernels_executed_; }
  // Where the kernels it runs are reported, row by kernel class (set before the first launch;
  // default: a table of its own, which nobody reads).
  void set_stats_sink(proto::KernelStatsSink& sink);
  // Where the kernels it runs go on the run's timeline (the app's sink; null: nowhere, the
  // default). Asked per kernel launch whether it records (`--trace`).
  void set_trace_sink(proto::KernelTraceSink* sink) { trace_ = sink; }

 protected:
  virtual void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  void launch(proto::KernelLaunch& launch, const sc_core::sc_time& issue_time);
  void launch_step(proto::StepLaunch& step, const sc_core::sc_time& issue_time);
  static bool has_collective(const kernels::StepKernels& step);

 private:
  // The report row a kernel adds to, found by its static name pointer (a hash of a pointer, not
  // a string compare per launch). Null: a collective, which the TP group reports.
  struct StatsSlots {
    proto::KernelClassStats* row;
  };
  struct SlotKey {
    const char* name;
    kernels::OpKind op;
    kernels::Phase phase;
    bool operator==(const SlotKey& o) const { return name == o.name && op == o.op && phase == o.phase; }
  };
  struct SlotKeyHash {
    std::size_t operator()(const SlotKey& k) const;
  };
  // One priced kernel of a step: its stream time and where its statistics go. Its launches
  // reach the statistics rows when its shape changes or the rows are read (settle): its part
  // counts the launches of every kernel it holds, consecutive steps mostly repeat a kernel, and
  // integer sums of n launches added at once equal n adds, so the rows are the same and a
  // repeated kernel costs nothing a step.
  struct PricedKernel {
    kernels::KernelCost cost;
    sc_core::sc_time duration;
    StatsSlots slots;
    kernels::Kernel kernel_copy;  // what was priced, to recognise it in the next step
    mutable std::uint64_t settled = 0;  // its part's launches when its rows last had them all
  };
  // The kernels of one part of a step (pre, per layer, post) as priced, the chunks they came from
  // (kept: their identity is their content), and the totals a launch adds to the GPU's.
  struct Part {
    std::vector<PricedKernel> priced;
    kernels::ChunkList chunks;
    std::uint64_t launches = 0;  // of each kernel in `priced`, over the steps so far
    std::int64_t ps = 0;         // GPU time of one launch of the kernels run here, picoseconds
    std::uint64_t run = 0;       // kernels run here (not collectives)
  };
  static bool same_shape(const kernels::Kernel& a, const kernels::Kernel& b);
  StatsSlots slots_for(const kernels::Kernel& kernel);
  void account(const kernels::Kernel& kernel, const kernels::KernelCost& cost, int repeat, const StatsSlots& slots);
  void defer_account(Part& part, int repeat);
  static void settle(const PricedKernel& p, std::uint64_t launches);
  static void forget(const PricedKernel& p, Part& part);
  void settle_all() const;
  // Collectives (TP ranks only) are not run here: their times come with the launch.
  static bool same_chunks(const kernels::KernelList& list, const kernels::ChunkList& held) {
    const kernels::ChunkList& chunks = list.chunks();
    if (chunks.size() != held.size()) return false;
    for (std::size_t c = 0; c < chunks.size(); ++c)
      if (chunks[c].get() != held[c].get()) return false;
    return true;
  }
  bool reprice_new_chunks(const kernels::KernelList& list, Part& part,
                          const std::vector<proto::CollectiveTime>& collectives);
  // `reuse`: reuses_kernel_costs().
  void price(const kernels::KernelList& list, Part& part, bool reuse,
             const std::vector<proto::CollectiveTime>& collectives);
  void price_one(const kernels::Kernel& kernel, PricedKernel& p, Part& part, bool kept,
                 const std::vector<proto::CollectiveTime>& collectives);
  sc_core::sc_time collective_time(const std::vector<proto::CollectiveTime>& times,
                                   const kernels::Kernel& collective) const;
  void launch_step_closed_form(proto::StepLaunch& step, const sc_core::sc_time& issue_time);
  void launch_step_with_collectives(proto::StepLaunch& step, const sc_core::sc_time& issue_time);
  bool replay_matches(const proto::StepReplay& replay, const sc_core::sc_time& issue,
                      const sc_core::sc_time& compute_free, const sc_core::sc_time& comm_free) const;

  int device_id_;
  std::array<sc_core::sc_time, kMaxStreams> stream_free_{};
  std::int64_t busy_ps_ = 0;
  std::uint64_t kernels_executed_ = 0;
  proto::KernelStatsTable own_stats_;
  proto::KernelStatsSink* stats_ = nullptr;
  proto::KernelTraceSink* trace_ = nullptr;
  tsl::robin_map<SlotKey, StatsSlots, SlotKeyHash> slots_;
  Part pre_, layer_, post_;  // launch_step scratch: no allocation per step
};

// What a GPU kind's factory receives.
struct GpuArgs {
  std::string instance_name;   // SystemC module name
  int device_id = 0;
  config::Params params;
  // Where the GPU reports the kernels it runs (null: nowhere). A GpuModule also gets it through
  // set_stats_sink; a socket GPU's model (hw/gpu/socket_gpu.hpp) adds its rows here itself.
  proto::KernelStatsSink* stats = nullptr;
  // Where they go on the timeline (null: nowhere): the same for trace spans, when recording().
  proto::KernelTraceSink* trace = nullptr;
};

using GpuRegistry = registry::Registry<GpuModule, const GpuArgs&>;
inline GpuRegistry& gpu_registry() { return GpuRegistry::instance("gpu"); }

}  // namespace ks::hw
