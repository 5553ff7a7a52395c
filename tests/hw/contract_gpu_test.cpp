// examples/contract_gpu: a GPU written only against the TLM contract (an SC_THREAD serving a
// kernel queue; Synchronize waits inside b_transport) driven by our HostCpu. Expected step
// timings are worked out by hand in the comments (and, for the host-bound case, also with
// tests/support/step_time.hpp), not taken from the simulator.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "examples/contract_gpu/contract_gpu.hpp"
#include "examples/user_interconnect/crossbar.hpp"
#include "hw/gpu/socket_gpu.hpp"
#include "hw/gpu/tp_group.hpp"
#include "hw/host/host_cpu.hpp"
#include "kernels/gpu_spec.hpp"
#include "kernels/step_decomposer.hpp"
#include "sc_modules/sim/sim.hpp"
#include "tests/support/engine_host.hpp"
#include "tests/support/hand_kernels.hpp"
#include "tests/support/schema_params.hpp"
#include "tests/support/step_time.hpp"

using namespace ks;

namespace {

std::unique_ptr<test_support::EngineHost> make_host(const std::string& yaml) {
  return test_support::make_engine_host(yaml);
}

using test_support::us;

kernels::Kernel kernel(double flops) { return test_support::gemm_of_flops(flops); }

// Six kernels in launch order: pre 1 MFLOP; two layers of (4 MFLOP, 0 FLOP); post 2 MFLOP.
// On a 1 TFLOP/s engine with a 3 us launch latency they take 4, 7, 3, 7, 3, 5 us.
kernels::StepKernels six_kernels() {
  kernels::StepKernels s;
  s.pre = {kernel(1e6)};
  s.per_layer = {kernel(4e6), kernel(0)};
  s.num_layers = 2;
  s.post = {kernel(2e6)};
  return s;
}

const hw::StepShape kShape{1, 1, false, 1};

}  // namespace

// Host: prepare 10 us, 2 us per launch, finish 5 us. Kernel i is issued at 10 + 2(i+1) us:
// 12, 14, 16, 18, 20, 22. The GPU runs 12-16, 16-23, 23-26, 26-33, 33-36, 36-41. The host has
// launched everything at 22 us, waits 19 us, finishes at 41 + 5 = 46 us. A second step starts at
// 46 us and ends at 92 us. Counting the time the GPU spent inside b_transport twice would end
// the first step at 41 + 46 us or later.
TEST(ContractGpu, GpuBoundStepsTakeTheHandComputedTimeOnce) {
  sim::Environment env;
  auto host = make_host("prepare_overhead: 10us\nfinish_overhead: 5us\nlaunch_overhead: 2us\n");
  contract_gpu::ContractGpu gpu("gpu", 1e12, us(3));
  host->gpu_socket.bind(gpu.socket);
  const kernels::StepKernels step = six_kernels();
  hw::StepTiming first, second;
  sc_core::sc_time after_first, after_second;
  env.process([&] {
    first = host->run_step(step, kShape, 1);
    after_first = env.now();
    second = host->run_step(step, kShape, 2);
    after_second = env.now();
  });
  env.run();
  EXPECT_EQ(first.host_before, us(10));
  EXPECT_EQ(first.launch, us(12));
  EXPECT_EQ(first.gpu_wait, us(19));
  EXPECT_EQ(first.host_after, us(5));
  EXPECT_EQ(first.total, us(46));
  EXPECT_EQ(after_first, us(46));
  EXPECT_EQ(second.total, us(46));
  EXPECT_EQ(second.gpu_wait, us(19));
  EXPECT_EQ(after_second, us(92));
  EXPECT_EQ(gpu.kernels_done(), 12u);
  EXPECT_EQ(gpu.synchronizations(), 2u);
  EXPECT_EQ(gpu.busy(), us(2 * 29));
  // The GPU answers a StepLaunch with TLM_COMMAND_ERROR_RESPONSE: the host sent kernels instead.
  EXPECT_EQ(host->whole_step_launches(), 0u);
  EXPECT_EQ(host->steps(), 2u);
}

// Launches at 10 us each: kernels issued at 20, 30, ..., 70 us each run as soon as issued
// (20-24, 30-37, 40-43, 50-57, 60-63, 70-75): the host waits 5 us after its last launch and the
// step ends at 75 + 5 = 80 us.
TEST(ContractGpu, HostBoundStepMatchesTheAsynchronousLaunchFormula) {
  sim::Environment env;
  auto host = make_host("prepare_overhead: 10us\nfinish_overhead: 5us\nlaunch_overhead: 10us\n"
                        "launch_granularity: kernel\n");
  contract_gpu::ContractGpu gpu("gpu", 1e12, us(3));
  host->gpu_socket.bind(gpu.socket);
  const kernels::StepKernels step = six_kernels();
  hw::StepTiming t;
  env.process([&] { t = host->run_step(step, kShape, 1); });
  env.run();
  EXPECT_EQ(t.total, us(80));
  EXPECT_EQ(t.gpu_wait, us(5));
  EXPECT_EQ(env.now(), us(80));
  const auto formula = test_support::async_step_time(step, 10e-6, 10e-6, 5e-6, [](const kernels::Kernel& k) {
    return k.flops / 1e12 + 3e-6;
  });
  EXPECT_NEAR(formula.seconds, 80e-6, 1e-12);
  EXPECT_NEAR(formula.gpu_wait_s, 5e-6, 1e-12);
}

// While the host process is blocked inside the GPU's Synchronize (plain SystemC waits, from 0 to
// 41 us), other environment processes still run at their own times.
TEST(ContractGpu, OtherProcessesRunOnTimeWhileTheHostWaitsInsideTheGpu) {
  sim::Environment env;
  auto host = make_host("prepare_overhead: 10us\nfinish_overhead: 5us\nlaunch_overhead: 2us\n");
  contract_gpu::ContractGpu gpu("gpu", 1e12, us(3));
  host->gpu_socket.bind(gpu.socket);
  const kernels::StepKernels step = six_kernels();
  sc_core::sc_time seen_a, seen_b, step_end;
  env.process([&] {
    host->run_step(step, kShape, 1);
    step_end = env.now();
  });
  env.process([&] {
    env.hold(us(20));
    seen_a = env.now();
    env.hold(us(10));
    seen_b = env.now();
  });
  env.run();
  EXPECT_EQ(seen_a, us(20));
  EXPECT_EQ(seen_b, us(30));
  EXPECT_EQ(step_end, us(46));
}

// A TP group whose two ranks are contract GPUs (through hw::SocketGpu) and whose all-reduce
// crosses the example crossbar (5 us + 1e6 B / 100 GB/s = 15 us for two ranks). Host: prepare
// 10 us, 2 us per launch, finish 5 us. The GEMM (4 MFLOP: 7 us) is issued at 12 us and runs
// 12-19. The all-reduce, issued at 14 us, needs the ranks' compute: the group synchronises them
// (the host waits inside, until 19 us) and the crossbar runs it 19-34; both streams wait for it.
// The host, back at 19 us, issues the last GEMM (2 MFLOP: 5 us) at 21 us; it runs 34-39. The
// step ends at 39 + 5 = 44 us (launch phase 11 us: the host was held in the collective).
TEST(ContractGpu, TpGroupOfTimedRanksOnAUserInterconnectTakesTheHandComputedTime) {
  sim::Environment env;
  auto host = make_host("prepare_overhead: 10us\nfinish_overhead: 5us\nlaunch_overhead: 2us\n");
  const hw::SocketGpuFactory make = [](const hw::GpuArgs& args) {
    auto gpu = std::make_unique<contract_gpu::ContractGpu>(args.instance_name.c_str(), 1e12, us(3));
    proto::GpuTargetSocketBase* socket = &gpu->socket;
    return hw::SocketGpuParts{std::move(gpu), socket, *kernels::find_builtin_gpu("h100_sxm")};
  };
  hw::SocketGpu rank0("rank0", hw::GpuArgs{"rank0", 0, {}}, make);
  hw::SocketGpu rank1("rank1", hw::GpuArgs{"rank1", 1, {}}, make);
  hw::TpGroup group("tp", {&rank0, &rank1});
  user_interconnect::Crossbar xbar("xbar", us(5), 100e9);
  group.fabric_socket.bind(xbar.socket);
  host->gpu_socket.bind(group.socket);
  const kernels::Kernel ar = test_support::all_reduce_of(1e6);
  kernels::StepKernels step;
  step.per_layer = {kernel(4e6), ar, kernel(2e6)};
  step.num_layers = 1;
  hw::StepTiming t;
  env.process([&] { t = host->run_step(step, kShape, 1); });
  env.run();
  EXPECT_EQ(t.total, us(44));
  EXPECT_EQ(t.launch, us(11));
  EXPECT_EQ(t.gpu_wait, us(18));
  EXPECT_EQ(env.now(), us(44));
  EXPECT_EQ(xbar.collectives(), 1u);
  auto& m0 = static_cast<contract_gpu::ContractGpu&>(rank0.model());
  EXPECT_EQ(m0.kernels_done(), 2u);
  EXPECT_EQ(m0.busy(), us(12));
}
