#include "hw/host/launch_policy.hpp"

namespace ks::hw {

void add_launch_params(config::Schema& schema) {
  schema
      .quantity("launch_overhead", config::Dim::Time, std::string("4us"),
                "CPU time to launch one kernel (without CUDA graphs)", 0.0, false)
      .flag("cuda_graphs", false,
            "replay one captured CUDA graph per decode-only step instead of launching each kernel")
      .integer("cuda_graph_max_batch_size", 512,
               "largest decode batch with a captured graph (vLLM: max_cudagraph_capture_size); larger "
               "batches launch kernel by kernel",
               1)
      .quantity("graph_launch_overhead", config::Dim::Time, std::string("10us"),
                "CPU time to launch one CUDA graph (not fitted: a typical cudaGraphLaunch cost)", 0.0, false)
      .choice("launch_granularity", {"step", "kernel"}, std::string("step"),
              "TLM transactions per engine step: step (one, priced per kernel with the same timing and "
              "statistics) or kernel (one per kernel); see docs/performance.md");
}

LaunchPolicy launch_policy(const config::Params& params) {
  LaunchPolicy p;
  p.per_kernel_s = params.number("launch_overhead");
  p.cuda_graphs = params.flag("cuda_graphs");
  p.max_graph_batch = params.integer("cuda_graph_max_batch_size");
  p.graph_launch_s = params.number("graph_launch_overhead");
  p.step_granularity = params.string("launch_granularity") == "step";
  return p;
}

}  // namespace ks::hw
