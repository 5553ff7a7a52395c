// examples/user_interconnect: a crossbar written only against the TLM contract carries a TP
// group's all-reduces instead of KernelSight's fabric. Expected times are worked out by hand.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "examples/user_interconnect/crossbar.hpp"
#include "hw/gpu/gpu_module.hpp"
#include "hw/gpu/tp_group.hpp"
#include "hw/host/host_cpu.hpp"
#include "sc_modules/sim/sim.hpp"
#include "tests/support/engine_host.hpp"
#include "tests/support/hand_kernels.hpp"
#include "tests/support/schema_params.hpp"

using namespace ks;

namespace {
using test_support::us;
}  // namespace

// Two H100s (roofline, no kernel overhead) in a TP group; host costs nothing. Each of two layers
// runs a 2 x 4096^3 FLOP GEMM (bytes 0: compute bound) on both ranks, t_g = 2 x 4096^3 /
// 989.4e12 s, then an all-reduce of 1 MB on the crossbar (5 us + 2 x (1/2) x 1e6 B / 100 GB/s =
// 15 us) that the next GEMM waits for. The step takes 2 x (t_g + 15 us).
TEST(UserInterconnect, CrossbarCarriesTheTpGroupsAllReducesWithTheHandComputedTime) {
  sim::Environment env;
  const auto& gpu_entry = hw::gpu_registry().get("catalog", {}, "gpu");
  const auto gpu_p = test_support::resolve_params("spec: h100_sxm\ntier: roofline\nkernel_overhead: 0us\n", gpu_entry.schema);
  auto gpu0 = gpu_entry.make({"gpu0", 0, gpu_p});
  auto gpu1 = gpu_entry.make({"gpu1", 1, gpu_p});
  ASSERT_DOUBLE_EQ(gpu0->spec().peak(kernels::DType::BF16), 989.4e12);
  hw::TpGroup group("tp", {gpu0.get(), gpu1.get()});
  user_interconnect::Crossbar xbar("xbar", us(5), 100e9);
  group.fabric_socket.bind(xbar.socket);
  auto host = test_support::make_engine_host("prepare_overhead: 0us\nfinish_overhead: 0us\nlaunch_overhead: 0us\n");
  host->gpu_socket.bind(group.socket);

  kernels::Kernel gemm{};
  gemm.op = kernels::OpKind::Gemm;
  gemm.name = "gemm";
  gemm.dtype = kernels::DType::BF16;
  gemm.m = gemm.n = gemm.k = 4096;
  gemm.flops = 2.0 * 4096 * 4096 * 4096;
  const kernels::Kernel ar = test_support::all_reduce_of(1e6);
  kernels::StepKernels step;
  step.per_layer = {gemm, ar};
  step.num_layers = 2;

  hw::StepTiming t;
  env.process([&] { t = host->run_step(step, hw::StepShape{1, 1, false, 2}, 1); });
  env.run();
  const double t_g = 2.0 * 4096 * 4096 * 4096 / 989.4e12;
  EXPECT_NEAR(t.total.to_seconds(), 2 * (t_g + 15e-6), 4e-12);
  EXPECT_EQ(xbar.collectives(), 2u);
  EXPECT_EQ(xbar.collective_time(proto::CollectiveKind::AllReduce, 1e6, 2), us(15));
  // The crossbar is shared (probes say not exclusive): the group takes kernels, not steps.
  EXPECT_EQ(host->whole_step_launches(), 0u);
  EXPECT_EQ(gpu0->kernels_executed(), 2u);
  EXPECT_EQ(gpu1->kernels_executed(), 2u);
}
