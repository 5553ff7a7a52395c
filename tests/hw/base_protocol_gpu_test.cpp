// examples/base_protocol_gpu: a base-protocol accelerator behind hw::BaseProtocolGpu. The
// accelerator runs at 1 GHz with 1024 MACs (2048 FLOP) per cycle and 500 setup cycles, so a kernel
// of F FLOPs takes (500 + ceil(F / 2048)) ns. Expected times are worked out by hand below.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>

#include "examples/base_protocol_gpu/systolic_accelerator.hpp"
#include "hw/gpu/base_protocol_gpu.hpp"
#include "hw/host/host_cpu.hpp"
#include "proto/payload_pool.hpp"
#include "sc_modules/sim/sim.hpp"
#include "tests/support/engine_host.hpp"
#include "tests/support/hand_kernels.hpp"
#include "tests/support/schema_params.hpp"

using namespace ks;

namespace {

static_assert(offsetof(hw::KernelDescriptor, flops) == 0, "the accelerator reads FLOPs from byte 0");

sc_core::sc_time ns(double v) { return sc_core::sc_time(v, sc_core::SC_NS); }
using test_support::us;

kernels::Kernel kernel(double flops) { return test_support::gemm_of_flops(flops); }

struct Bench {
  base_protocol_gpu::SystolicAccelerator accel{"accel", ns(1), 1024, 500};
  hw::BaseProtocolGpu adapter{"adapter"};
  Bench() { adapter.device_socket.bind(accel.socket); }
};

struct Launcher : sc_core::sc_module {
  proto::GpuInitiatorSocket<Launcher> socket{"socket"};
  proto::PayloadPool pool, sync_pool;  // one pool per extension kind
  explicit Launcher(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
  proto::KernelLaunch launch(const kernels::Kernel& k, sc_core::sc_time delay) {
    proto::PooledPayload p(pool);
    auto& ext = proto::PayloadPool::extension<proto::KernelLaunch>(*p);
    ext.kernel = k;
    socket->b_transport(*p, delay);
    EXPECT_EQ(p->get_response_status(), tlm::TLM_OK_RESPONSE);
    return ext;
  }
};

}  // namespace

// 3500 x 2048 FLOP: 500 + 3500 = 4000 cycles = 4 us, issued at 0: 0-4 us. 6500 x 2048 FLOP:
// 7000 cycles, issued at 1 us while the engine is busy: 4-11 us. 2049 FLOP: 500 + 2 cycles,
// issued at 20 us: 20 us - 20.502 us. A Synchronize issued at 0 returns delay 20.502 us.
TEST(BaseProtocolGpu, KernelsTakeTheAcceleratorsAnnotatedTimeInOrder) {
  sim::Environment env;
  Bench b;
  Launcher l("launcher");
  l.socket.bind(b.adapter.socket);
  env.process([&] {
    const auto k1 = l.launch(kernel(3500.0 * 2048), sc_core::SC_ZERO_TIME);
    EXPECT_EQ(k1.start, us(0));
    EXPECT_EQ(k1.finish, us(4));
    const auto k2 = l.launch(kernel(6500.0 * 2048), us(1));
    EXPECT_EQ(k2.start, us(4));
    EXPECT_EQ(k2.finish, us(11));
    EXPECT_NEAR(k2.cost.seconds, 7e-6, 1e-15);
    const auto k3 = l.launch(kernel(2049), us(20));
    EXPECT_EQ(k3.finish, us(20) + ns(502));
    proto::PooledPayload s(l.sync_pool);
    proto::PayloadPool::extension<proto::Synchronize>(*s).stream = -1;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    l.socket->b_transport(*s, delay);
    EXPECT_EQ(delay, us(20) + ns(502));
  });
  env.run();
  EXPECT_EQ(b.accel.writes(), 3u);
  EXPECT_EQ(b.accel.last_flops(), 2049.0);
  EXPECT_EQ(b.adapter.kernels_sent(), 3u);
}

// Our host (prepare 10 us, 2 us per launch, finish 5 us) on six kernels of 4, 7, 3, 7, 3 and 5 us
// (pre; two layers of the 7 and 3 us kernels; post). Issued at 12, 14, ..., 22 us, they run
// 12-16, 16-23, 23-26, 26-33, 33-36, 36-41: the host waits 19 us after its last launch and the
// step takes 41 + 5 = 46 us.
TEST(BaseProtocolGpu, HostStepTakesTheHandComputedTime) {
  sim::Environment env;
  Bench b;
  auto host = test_support::make_engine_host("prepare_overhead: 10us\nfinish_overhead: 5us\nlaunch_overhead: 2us\n");
  host->gpu_socket.bind(b.adapter.socket);
  kernels::StepKernels step;
  step.pre = {kernel(3500.0 * 2048)};                            // 4000 cycles
  step.per_layer = {kernel(6500.0 * 2048), kernel(2500.0 * 2048)};  // 7000, 3000 cycles
  step.num_layers = 2;
  step.post = {kernel(4500.0 * 2048)};                           // 5000 cycles
  hw::StepTiming t;
  env.process([&] { t = host->run_step(step, hw::StepShape{1, 1, false, 1}, 1); });
  env.run();
  EXPECT_EQ(t.total, us(46));
  EXPECT_EQ(t.launch, us(12));
  EXPECT_EQ(t.gpu_wait, us(19));
  EXPECT_EQ(env.now(), us(46));
  EXPECT_EQ(b.accel.writes(), 6u);
  EXPECT_EQ(host->whole_step_launches(), 0u) << "the adapter answers StepLaunch with a command error";
}
