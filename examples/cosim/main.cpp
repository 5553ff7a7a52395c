// Co-simulation example: the user's own SystemC initiator drives KernelSight's GPU module over the
// GPU TLM socket. It launches three kernels asynchronously, synchronises, and checks the GPU's
// timing against the roofline computed here by hand. Exit status 0 when it matches.
#include <cmath>
#include <cstdio>

#include <systemc>

#include "hw/gpu/gpu_module.hpp"
#include "kernels/kernel_builders.hpp"
#include "base/config/document.hpp"
#include "sc_modules/sim/kernel_setup.hpp"
#include "proto/payload_pool.hpp"

struct Generator : sc_core::sc_module {  // "their" module
  ks::proto::GpuInitiatorSocket<Generator> socket{"socket"};
  ks::proto::PayloadPool launches, syncs;
  double finished_s = -1;

  SC_HAS_PROCESS(Generator);
  explicit Generator(const sc_core::sc_module_name& name) : sc_core::sc_module(name) { SC_THREAD(run); }

  void run() {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    for (int i = 0; i < 3; ++i) {
      ks::proto::PooledPayload p(launches);
      auto& k = ks::proto::PayloadPool::extension<ks::proto::KernelLaunch>(*p);
      k.kernel = ks::kernels::make_gemm("gemm", 4096, 4096, 4096, ks::kernels::DType::BF16, 2, 2);
      socket->b_transport(*p, delay);
    }
    ks::proto::PooledPayload s(syncs);
    ks::proto::PayloadPool::extension<ks::proto::Synchronize>(*s).stream = -1;
    socket->b_transport(*s, delay);
    wait(delay);
    finished_s = sc_core::sc_time_stamp().to_seconds();
  }
};

int sc_main(int, char*[]) {
  ks::sim::setup_kernel();
  ks::config::Document doc = ks::config::Document::parse("spec: h100_sxm\ntier: roofline\n", "inline");
  const auto& entry = ks::hw::gpu_registry().get("catalog", {}, "gpu");
  auto gpu = entry.make({"gpu0", 0, doc.root().resolve(entry.schema)});
  Generator gen("generator");
  gen.socket.bind(gpu->socket);
  sc_core::sc_start();
  // Three back-to-back GEMMs of 2 x 4096^3 FLOP at 989.4 dense BF16 TFLOP/s, plus 2 us each.
  const double want = 3 * (2.0 * 4096.0 * 4096.0 * 4096.0 / 989.4e12 + 2e-6);
  std::printf("kernels executed: %llu, finished at %.9f s, expected %.9f s\n",
              static_cast<unsigned long long>(gpu->kernels_executed()), gen.finished_s, want);
  return gpu->kernels_executed() == 3 && std::fabs(gen.finished_s - want) < 1e-9 ? 0 : 1;
}
