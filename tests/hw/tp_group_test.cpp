// A TP group over the fabric: compute on every rank, all-reduces as collectives on the comm
// stream, and the dependency between them (serialised by default, overlapped when allowed).
#include <gtest/gtest.h>

#include "hw/gpu/gpu_module.hpp"
#include "hw/gpu/pipeline_link.hpp"
#include "hw/gpu/tp_group.hpp"
#include "hw/interconnect/fabric_module.hpp"
#include "hw/interconnect/topology_presets.hpp"
#include "base/config/document.hpp"
#include "tests/support/schema_params.hpp"
#include "tests/support/topology_yaml.hpp"
#include "sc_modules/sim/sim.hpp"
#include "proto/payload_pool.hpp"

using namespace ks;

namespace {

using ks::test_support::resolve_params;
config::Params resolve(const std::string& yaml, const config::Schema& schema) {
  return resolve_params(yaml, schema);
}

struct Rig {
  std::vector<std::unique_ptr<hw::GpuModule>> gpus;
  std::unique_ptr<hw::FabricModule> fabric;
  std::unique_ptr<hw::TpGroup> group;
  explicit Rig(int tp) {
    const auto& entry = hw::gpu_registry().get("catalog", {}, "gpu");
    std::vector<hw::GpuModule*> raw;
    for (int i = 0; i < tp; ++i) {
      gpus.push_back(entry.make({"gpu" + std::to_string(i), i, resolve("spec: h100_sxm\ntier: roofline\nkernel_overhead: 0us\n", entry.schema)}));
      raw.push_back(gpus.back().get());
    }
    fabric = std::make_unique<hw::FabricModule>(
        "fabric", std::shared_ptr<interconnect::Topology>(test_support::topology_from_yaml(
                      "kind: dgx_h100\ngpus_per_node: " + std::to_string(tp) +
                      "\nnvlink_bandwidth: 360GB/s\nnvlink_latency: 6us\ncollective_overhead: 20us\n" +
                      test_support::kSingleProtocol)));
    group = std::make_unique<hw::TpGroup>("tp", raw);
    group->fabric_socket.bind(fabric->socket);
  }
};

struct Launcher : sc_core::sc_module {
  proto::GpuInitiatorSocket<Launcher> socket{"socket"};
  proto::PayloadPool pool, sync_pool;
  explicit Launcher(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
  proto::KernelLaunch launch(const kernels::Kernel& k, bool overlap = false) {
    proto::PooledPayload p(pool);
    auto& ext = proto::PayloadPool::extension<proto::KernelLaunch>(*p);
    ext.kernel = k;
    ext.stream = 0;
    ext.overlap = overlap;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    socket->b_transport(*p, d);
    EXPECT_EQ(p->get_response_status(), tlm::TLM_OK_RESPONSE);
    return ext;
  }
  double synchronize() {
    proto::PooledPayload p(sync_pool);
    proto::PayloadPool::extension<proto::Synchronize>(*p).stream = -1;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    socket->b_transport(*p, d);
    return sim::to_seconds(sc_core::sc_time_stamp() + d);
  }
};

kernels::Kernel gemm(std::int64_t m) {
  kernels::Kernel g{};
  g.op = kernels::OpKind::Gemm;
  g.name = "gemm";
  g.dtype = kernels::DType::BF16;
  g.m = m, g.n = 8192, g.k = 8192;
  g.flops = 2.0 * m * 8192 * 8192;
  g.bytes = 0;  // compute-bound by construction
  return g;
}

kernels::Kernel all_reduce(double bytes) {
  kernels::Kernel k{};
  k.op = kernels::OpKind::AllReduce;
  k.name = "attn_all_reduce";
  k.dtype = kernels::DType::BF16;
  k.bytes = bytes;
  return k;
}

// Independently: 2 m 8192^2 FLOP at H100 SXM dense BF16 (989.4 TFLOP/s, the catalog's value).
double gemm_seconds(std::int64_t m, const hw::GpuModule& gpu) {
  return 2.0 * m * 8192.0 * 8192.0 / gpu.spec().peak(kernels::DType::BF16);
}
// The rig's fabric: 20 us overhead, 6 us and 360 GB/s per transfer; ring over 2 ranks: 2 steps of B/2.
double ring2_seconds(double bytes) { return 20e-6 + 2 * (6e-6 + bytes / 2 / 360e9); }

}  // namespace

TEST(TpGroup, AllReduceWaitsForComputeAndTheNextKernelWaitsForIt) {
  sim::Environment env;
  Rig rig(2);
  Launcher host("host");
  host.socket.bind(rig.group->socket);
  const double B = 64.0 * 1024 * 1024;
  env.process([&] {
    host.launch(gemm(4096));
    const auto ar = host.launch(all_reduce(B));
    host.launch(gemm(4096));
    const double t = host.synchronize();
    const double g = gemm_seconds(4096, *rig.gpus[0]);
    EXPECT_NEAR(sim::to_seconds(ar.start), g, 1e-9);
    EXPECT_NEAR(sim::to_seconds(ar.finish) - sim::to_seconds(ar.start), ring2_seconds(B), 1e-9);
    EXPECT_EQ(ar.cost.bound, kernels::Bound::Communication);
    EXPECT_NEAR(t, 2 * g + ring2_seconds(B), 1e-9);
  });
  env.run();
  EXPECT_EQ(rig.group->collectives(), 1u);
  EXPECT_EQ(rig.gpus[1]->kernels_executed(), 2u);  // both ranks ran both GEMMs
  EXPECT_NEAR(rig.group->exposed_comm_seconds(), ring2_seconds(B), 1e-9);
}

TEST(TpGroup, IndependentComputeOverlapsTheCommunicationStream) {
  sim::Environment env;
  Rig rig(2);
  Launcher host("host");
  host.socket.bind(rig.group->socket);
  const double B = 64.0 * 1024 * 1024;
  env.process([&] {
    host.launch(gemm(4096));
    host.launch(all_reduce(B), /*overlap=*/true);
    host.launch(gemm(8192));  // does not consume the all-reduce: runs alongside it
    const double t = host.synchronize();
    const double g1 = gemm_seconds(4096, *rig.gpus[0]), g2 = gemm_seconds(8192, *rig.gpus[0]);
    EXPECT_NEAR(t, g1 + std::max(g2, ring2_seconds(B)), 1e-9);
    EXPECT_LT(t, g1 + g2 + ring2_seconds(B) - 0.5 * ring2_seconds(B));
  });
  env.run();
  EXPECT_DOUBLE_EQ(rig.group->exposed_comm_seconds(), 0.0);
}

TEST(TpGroup, CollectivesOnTheCommStreamRunInOrder) {
  // Two all-reduces issued back to back: the second starts when the first finishes (one comm
  // stream), so it ends at twice the single time; both reach the fabric.
  sim::Environment env;
  Rig rig(4);
  Launcher host("host");
  host.socket.bind(rig.group->socket);
  const double B = 256.0 * 1024 * 1024;
  env.process([&] {
    const auto a = host.launch(all_reduce(B), true);
    const auto b = host.launch(all_reduce(B), true);  // comm stream is in order: starts after a
    const double one = 20e-6 + 6 * (6e-6 + B / 4 / 360e9);
    EXPECT_NEAR(sim::to_seconds(a.finish), one, 1e-9);
    EXPECT_NEAR(sim::to_seconds(b.finish), 2 * one, 1e-9);
  });
  env.run();
  EXPECT_EQ(rig.fabric->collectives(), 2u);
}

namespace {
// One StepLaunch of `step` with no launch overhead; returns the response status.
tlm::tlm_response_status launch_whole_step(proto::GpuInitiatorSocket<Launcher>& socket, proto::PayloadPool& pool,
                                           const kernels::StepKernels& step,
                                           const sc_core::sc_time& launch_overhead = sc_core::SC_ZERO_TIME) {
  proto::PooledPayload p(pool);
  auto& ext = proto::PayloadPool::extension<proto::StepLaunch>(*p);
  ext.kernels = step;
  ext.launch_overhead = launch_overhead;
  ext.stream = 0;
  p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  socket->b_transport(*p, d);
  return p->get_response_status();
}

kernels::StepKernels layered_step(double all_reduce_bytes, int layers) {
  kernels::StepKernels step;
  step.pre = {gemm(1024)};
  step.per_layer = {gemm(2048), all_reduce(all_reduce_bytes), gemm(4096), all_reduce(all_reduce_bytes)};
  step.num_layers = layers;
  step.post = {gemm(512)};
  return step;
}

// Two ranks on links of their own (declared), a host launching on the group.
struct DeclaredPair {
  sim::Environment env;
  Rig rig{2};
  Launcher host{"host"};
  DeclaredPair() {
    rig.fabric->declare_group(rig.group->device_ids());
    host.socket.bind(rig.group->socket);
  }
};
}  // namespace

// 40 layers: most of them are not walked but repeated (gpu_module.cpp), which must not show.
TEST(TpGroup, WholeStepOnItsOwnLinksTimesEveryCollectiveAsTheFabricWould) {
  DeclaredPair pair;
  Rig& rig = pair.rig;
  Launcher& host = pair.host;
  const double B = 32.0 * 1024 * 1024;
  const int layers = 40;
  const kernels::StepKernels step = layered_step(B, layers);
  pair.env.process([&] {
    EXPECT_EQ(launch_whole_step(host.socket, host.pool, step), tlm::TLM_OK_RESPONSE);
    const double t = host.synchronize();
    const auto& g = *rig.gpus[0];
    // Every all-reduce waits for the GEMM before it and the next GEMM waits for it: all in series.
    const double compute = gemm_seconds(1024, g) + layers * (gemm_seconds(2048, g) + gemm_seconds(4096, g)) +
                           gemm_seconds(512, g);
    EXPECT_NEAR(t, compute + 2 * layers * ring2_seconds(B), 1e-9);
  });
  pair.env.run();
  EXPECT_EQ(rig.group->collectives(), 2u * layers);
  EXPECT_NEAR(rig.group->comm_seconds(), 2 * layers * ring2_seconds(B), 1e-9);
  EXPECT_NEAR(rig.group->exposed_comm_seconds(), 2 * layers * ring2_seconds(B), 1e-9);
  for (const auto& gpu : rig.gpus) EXPECT_EQ(gpu->kernels_executed(), 2u + 2u * layers);  // GEMMs, every rank
  EXPECT_EQ(rig.fabric->collectives(), 0u);  // timed once on idle links, not sent one by one
}

// Launch-bound: every kernel, collectives included, starts when it is issued (the GEMMs take
// 0.14 us, an all-reduce ~32 us, a launch 100 us), so the step ends one GEMM after the last
// issue, and each all-reduce is exposed for its whole duration, over 50 layers.
TEST(TpGroup, LaunchBoundWholeStepOfManyLayersEndsAtTheLastIssue) {
  DeclaredPair pair;
  Rig& rig = pair.rig;
  Launcher& host = pair.host;
  const double B = 1000, L = 100e-6;
  const int layers = 50;
  kernels::StepKernels step;
  step.pre = {gemm(1)};
  step.per_layer = {gemm(1), all_reduce(B), gemm(1), all_reduce(B)};
  step.num_layers = layers;
  step.post = {gemm(1)};
  pair.env.process([&] {
    EXPECT_EQ(launch_whole_step(host.socket, host.pool, step, sc_core::sc_time(L, sc_core::SC_SEC)),
              tlm::TLM_OK_RESPONSE);
    const double t = host.synchronize();
    EXPECT_NEAR(t, (2 + 4 * layers) * L + gemm_seconds(1, *rig.gpus[0]), 1e-9);
  });
  pair.env.run();
  EXPECT_EQ(rig.group->collectives(), 2u * layers);
  EXPECT_NEAR(rig.group->comm_seconds(), 2 * layers * ring2_seconds(B), 1e-9);
  EXPECT_NEAR(rig.group->exposed_comm_seconds(), 2 * layers * ring2_seconds(B), 1e-9);
  for (const auto& gpu : rig.gpus) EXPECT_EQ(gpu->kernels_executed(), 2u + 2u * layers);
}

// The contract with no group around: a StepLaunch is a value, so a launcher (a test here) can
// give one GPU the durations of its collectives itself. Without them the GPU refuses the step;
// with them every all-reduce waits for the GEMM before it and holds the next one: all in series,
// 3 layers x 2 all-reduces of 50 us, counted into the tally that travels with the launch.
TEST(GpuModule, StepWithCollectiveTimesAsValuesRunsWithoutAGroup) {
  sim::Environment env;
  const auto& entry = hw::gpu_registry().get("catalog", {}, "gpu");
  auto gpu = entry.make({"gpu", 0, resolve("spec: h100_sxm\ntier: roofline\nkernel_overhead: 0us\n", entry.schema)});
  Launcher host("host");
  host.socket.bind(gpu->socket);
  const double B = 1e6, ar = 50e-6;
  const int layers = 3;
  env.process([&] {
    proto::PooledPayload p(host.pool);
    auto& ext = proto::PayloadPool::extension<proto::StepLaunch>(*p);
    {
      const kernels::StepKernels step = layered_step(B, layers);
      ext.kernels = step;  // a copy: the launcher's step is gone before the transaction
    }
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    host.socket->b_transport(*p, d);
    EXPECT_EQ(p->get_response_status(), tlm::TLM_COMMAND_ERROR_RESPONSE) << "collectives without their times";
    ext.collective_times = {{kernels::OpKind::AllReduce, B, sc_core::sc_time(ar, sc_core::SC_SEC)}};
    ext.count_collectives = true;
    p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    host.socket->b_transport(*p, d);
    ASSERT_EQ(p->get_response_status(), tlm::TLM_OK_RESPONSE);
    const double compute = gemm_seconds(1024, *gpu) + layers * (gemm_seconds(2048, *gpu) + gemm_seconds(4096, *gpu)) +
                           gemm_seconds(512, *gpu);
    EXPECT_NEAR(host.synchronize(), compute + 2 * layers * ar, 1e-9);
    EXPECT_EQ(ext.tally.count, 2u * layers);
    // Whole picoseconds: exactly 2 x layers all-reduces of `ar` each.
    const auto all = static_cast<sc_dt::uint64>(2 * layers);
    EXPECT_EQ(ext.tally.busy.value(), 50'000'000u * all);  // 50 us = 5e7 ps
    EXPECT_EQ(ext.tally.exposed.value(), 50'000'000u * all);
  });
  env.run();
  EXPECT_EQ(gpu->kernels_executed(), 2u + 2u * layers);  // the GEMMs; collectives are not run here
}

TEST(TpGroup, RefusesWholeStepsWhenAnotherDeclaredGroupSharesItsLinks) {
  sim::Environment env;
  Rig rig(2);
  rig.fabric->declare_group(rig.group->device_ids());
  rig.fabric->declare_group({1, 0, 3});  // crosses gpu0's and gpu1's links to the switch
  Launcher host("host");
  host.socket.bind(rig.group->socket);
  const kernels::StepKernels step = layered_step(1e6, 2);
  env.process([&] {
    EXPECT_EQ(launch_whole_step(host.socket, host.pool, step), tlm::TLM_COMMAND_ERROR_RESPONSE);
  });
  env.run();
  EXPECT_EQ(rig.group->collectives(), 0u);
  EXPECT_EQ(rig.gpus[0]->kernels_executed(), 0u);  // nothing ran: the host launches kernel by kernel
}

TEST(Fabric, UndeclaredTrafficOverClaimedLinksIsAnErrorNamingTheLinkAndTheWayOut) {
  interconnect::FabricModel fabric(std::shared_ptr<interconnect::Topology>(interconnect::make_preset("dgx_h100", 1, 8)));
  fabric.declare_group({0, 1});
  fabric.declare_group({2, 3});
  EXPECT_TRUE(fabric.exclusive({0, 1}));
  EXPECT_TRUE(fabric.exclusive({3, 2}));      // a set: order does not matter
  EXPECT_FALSE(fabric.exclusive({4, 5}));     // not declared
  fabric.claim_exclusive({0, 1});
  EXPECT_NO_THROW(fabric.check_undeclared({4, 5}));  // other GPUs' links
  try {
    fabric.check_undeclared({1, 2});
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gpu1"), std::string::npos) << what;
    EXPECT_NE(what.find("launch_granularity=kernel"), std::string::npos) << what;
  }
}

// Pipeline sends are fabric transfers: they hold the links of their route, so they queue behind
// a TP collective on those links and behind each other. dgx_h100 defaults: 360 GB/s and 6 us
// per GPU -> NVSwitch -> GPU route; a link carries one transfer at a time, in issue order.
TEST(PipelineLink, SendsQueueBehindACollectiveAndEachOtherOnTheirLinks) {
  sim::Environment env;
  Rig rig(2);
  Launcher host("host");
  host.socket.bind(rig.group->socket);
  hw::PipelineLink first("first", {0}, {1}), second("second", {0}, {1});
  first.fabric_socket.bind(rig.fabric->socket);
  second.fabric_socket.bind(rig.fabric->socket);
  const double B = 64.0 * 1024 * 1024, S = 8.0 * 1024 * 1024;
  const double h = B / 2 / 360e9, s = S / 360e9;
  env.process([&] {
    // The all-reduce (ring over 2: 20 us overhead, two steps of B/2) holds gpu0 -> NVSwitch
    // until 20 us + 6 us + 2h (the second step starts when the first step's chunk has arrived).
    const auto ar = host.launch(all_reduce(B), /*overlap=*/true);
    EXPECT_NEAR(sim::to_seconds(ar.finish), ring2_seconds(B), 1e-12);
    const double a = sim::to_seconds(first.send(S, kernels::Phase::Decode, 0));
    EXPECT_NEAR(a, 26e-6 + 2 * h + s + 6e-6, 1e-12);
    const double b = sim::to_seconds(second.send(S, kernels::Phase::Decode, 0));
    EXPECT_NEAR(b, 26e-6 + 2 * h + 2 * s + 6e-6, 1e-12);
  });
  env.run();
  EXPECT_EQ(first.stats().at(kernels::Phase::Decode).transfers, 1u);
  EXPECT_NEAR(first.stats().at(kernels::Phase::Decode).seconds, 26e-6 + 2 * h + s + 6e-6, 1e-12);
  EXPECT_DOUBLE_EQ(second.stats().at(kernels::Phase::Decode).bytes, S);
  EXPECT_EQ(rig.fabric->copies(), 2u);
}
