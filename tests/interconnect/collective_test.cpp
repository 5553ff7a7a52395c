// Collectives as link transfers, against the α–β closed form and hand-computed times.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "hw/interconnect/fabric_model.hpp"
#include "hw/interconnect/topology_presets.hpp"
#include "tests/support/topology_yaml.hpp"

using namespace ks::interconnect;
using ks::test_support::topology_from_yaml;

namespace {
std::vector<int> first_n(int n) {
  std::vector<int> g(static_cast<std::size_t>(n));
  std::iota(g.begin(), g.end(), 0);
  return g;
}
}  // namespace

TEST(CollectiveSchedule, StepCountsAndChunkSizesFollowTheAlgorithms) {
  const double B = 1 << 20;
  auto ring = collective_schedule(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, first_n(4), B);
  ASSERT_EQ(ring.size(), 6u);  // 2(n-1)
  for (const auto& step : ring) {
    ASSERT_EQ(step.size(), 4u);
    for (const auto& t : step) {
      EXPECT_EQ(t.dst, (t.src + 1) % 4);
      EXPECT_DOUBLE_EQ(t.bytes, B / 4);
    }
  }
  EXPECT_EQ(collective_schedule(CollectiveKind::AllGather, CollectiveAlgorithm::Ring, first_n(8), B).size(), 7u);
  EXPECT_EQ(collective_schedule(CollectiveKind::ReduceScatter, CollectiveAlgorithm::Ring, first_n(8), B).size(), 7u);
  auto tree = collective_schedule(CollectiveKind::AllReduce, CollectiveAlgorithm::Tree, first_n(8), B);
  ASSERT_EQ(tree.size(), 6u);  // 2 log2(8)
  EXPECT_EQ(tree[0].size(), 4u);
  EXPECT_EQ(tree[2].size(), 1u);
  EXPECT_EQ(tree[2][0].src, 4);
  EXPECT_EQ(tree[2][0].dst, 0);
  // All-to-all: every ordered pair exactly once, bytes/n each.
  std::map<std::pair<int, int>, int> pairs;
  for (const auto& step : collective_schedule(CollectiveKind::AllToAll, CollectiveAlgorithm::Auto, first_n(4), B))
    for (const auto& t : step) {
      ++pairs[{t.src, t.dst}];
      EXPECT_DOUBLE_EQ(t.bytes, B / 4);
    }
  EXPECT_EQ(pairs.size(), 12u);
  EXPECT_THROW(collective_schedule(CollectiveKind::SendRecv, CollectiveAlgorithm::Auto, first_n(3), B),
               std::invalid_argument);
  EXPECT_THROW(collective_schedule(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, {1, 1}, B),
               std::invalid_argument);
}

TEST(CollectiveTiming, RingAllReduceOnAnIdleDgxMatchesTheHandComputedTime) {
  auto t = topology_from_yaml(std::string("kind: dgx_a100\nnvlink_bandwidth: 230GB/s\nnvlink_latency: 7us\n"
                                          "collective_overhead: 20us\n") + ks::test_support::kSingleProtocol);
  const double B = 64.0 * 1024 * 1024;
  // 20 us overhead + 14 steps x (7 us + 8 MiB / 230 GB/s).
  const double expected = 20e-6 + 14 * (7e-6 + (B / 8) / 230e9);
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, first_n(8), B),
              expected, 1e-12);
}

TEST(CollectiveTiming, NcclPicksTheFastestProtocolByItsTuningModel) {
  // NCCL's tuning constants (nccl 5067397c, src/graph/tuning.cc) at scale 1, NVLink, ring: base
  // latency LL 6.6, LL128 14, Simple 8.4 us; per step LL 0.6, LL128 1.9, Simple 3.4 us (the route's
  // 1 us where larger); bandwidth LL 1/2, LL128 0.92. 8-GPU all-reduce: 14 steps of B/8.
  auto t = topology_from_yaml(
      "kind: dgx_h100\nnvlink_bandwidth: 200GB/s\nnvlink_latency: 1us\ncollective_overhead: 20us\n"
      "nccl_latency_scale: 1\nll_max_bandwidth: 0GB/s\nnvls_efficiency: 0\nlocal_copy_bandwidth: 0GB/s\n");
  const auto ll = [](double b) { return 20e-6 + 6.6e-6 + 14 * (1e-6 + b / 8 / 100e9); };
  const auto ll128 = [](double b) { return 20e-6 + 14e-6 + 14 * (1.9e-6 + b / 8 / 184e9); };
  const auto simple = [](double b) { return 20e-6 + 8.4e-6 + 14 * (3.4e-6 + b / 8 / 200e9); };
  // LL = LL128 where 20 us = 14 B/8 (1/100 - 1/184) / (GB/s), B = 2.50 MB; LL128 = Simple at B = 20.2 MB.
  const std::map<double, CollectiveProtocol> expected = {{4096.0, CollectiveProtocol::LL},
                                                         {1048576.0, CollectiveProtocol::LL},
                                                         {4e6, CollectiveProtocol::LL128},
                                                         {16e6, CollectiveProtocol::LL128},
                                                         {268435456.0, CollectiveProtocol::Simple}};
  for (const auto& [b, protocol] : expected) {
    const double sim = idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), b);
    EXPECT_NEAR(sim, std::min({ll(b), ll128(b), simple(b)}), 1e-12) << b;
    const CollectivePlan plan = collective_plan(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), b);
    EXPECT_EQ(plan.protocol, protocol) << b;
    EXPECT_FALSE(plan.nvls);
  }
}

TEST(CollectiveTiming, NvlsAllReduceOnAnNvSwitchHopperRunsAtTwiceItsEfficiencyTimesTheLink) {
  // NVLS bus bandwidth 2 x 0.75 x 200 GB/s = 300 GB/s: an 8-GPU all-reduce of B moves 2(7/8) B of
  // bus traffic, so 1.75 B / 300 GB/s, after NCCL's NVLS latency of 25 us (no per-step latency).
  auto t = topology_from_yaml(
      "kind: dgx_h100\nnvlink_bandwidth: 200GB/s\nnvlink_latency: 1us\ncollective_overhead: 20us\n"
      "nccl_latency_scale: 1\nll_max_bandwidth: 0GB/s\nnvls_efficiency: 0.75\nnvls_latency: 0s\nlocal_copy_bandwidth: 0GB/s\n");
  const double B = 256.0 * 1024 * 1024;
  const auto plan = collective_plan(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), B);
  EXPECT_TRUE(plan.nvls);
  EXPECT_EQ(plan_name(plan), "nvls/Simple");
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), B),
              20e-6 + 25e-6 + 1.75 * B / 300e9, 1e-12);
  // Asked for a ring, or an all-gather: no NVLS (Simple: 8.4 us + 7 x (3.4 us + B/8 / 200 GB/s)).
  EXPECT_FALSE(collective_plan(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, first_n(8), B).nvls);
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllGather, CollectiveAlgorithm::Auto, first_n(8), B),
              20e-6 + 8.4e-6 + 7 * (3.4e-6 + B / 8 / 200e9), 1e-12);
}

TEST(CollectiveTiming, LlIsCappedAtNcclsPerGenerationBandwidthAndLl128StaysOffPcie) {
  // ll_max_bandwidth 50 GB/s on a 200 GB/s link: LL at 1/4 of it, not 1/2. 2-GPU all-reduce: 2 steps of B/2.
  auto t = topology_from_yaml(
      "kind: dgx_h100\nnvlink_bandwidth: 200GB/s\nnvlink_latency: 1us\ncollective_overhead: 0us\n"
      "nccl_latency_scale: 1\nll_max_bandwidth: 50GB/s\nnvls_efficiency: 0\nlocal_copy_bandwidth: 0GB/s\n");
  const double b = 65536;
  const double ll = 6.6e-6 + 2 * (1e-6 + b / 2 / 50e9);
  const auto plan = collective_plan(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(2), b);
  EXPECT_EQ(plan.protocol, CollectiveProtocol::LL);
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(2), b), ll, 1e-12);
  // PCIe only: NCCL enables LL128 on NVLink paths only, whatever the size.
  auto pcie = make_preset("pcie_l40s");
  for (double bytes = 512; bytes <= 1 << 30; bytes *= 4)
    EXPECT_NE(collective_plan(*pcie, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), bytes).protocol,
              CollectiveProtocol::LL128)
        << bytes;
  EXPECT_FALSE(make_plan(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, false, CollectiveProtocol::LL128, 8,
                         1e-6, 20e9, HopKind::PCIe, {}).has_value());
}

TEST(CollectiveTiming, LinkTransfersAgreeWithTheAlphaBetaFormOnAnIdleFabric) {
  // The presets as shipped: fitted NCCL costs, so sizes run LL, LL128, Simple and (H100, H200,
  // B200 all-reduce) NVLS.
  // With an engine's custom all-reduce on (below 8 MiB), its plans agree too.
  for (const std::string preset : {"dgx_a100", "dgx_h100", "hgx_h200", "hgx_b200"})
    for (bool custom : {false, true}) {
    auto t = custom ? topology_from_yaml("kind: " + preset + "\ncustom_allreduce_max_bytes: 8MiB\n") : make_preset(preset);
    const double alpha = t->path_latency(0, 1), beta = t->path_bandwidth(0, 1);
    std::set<std::string> seen;
    for (CollectiveKind kind : {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
                                CollectiveKind::AllToAll}) {
      for (int n : {2, 4, 8}) {
        for (double bytes : {4096.0, 1048576.0, 16777216.0, 268435456.0}) {
          for (CollectiveAlgorithm algo : {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree}) {
            if (algo == CollectiveAlgorithm::Tree && kind != CollectiveKind::AllReduce) continue;
            const double sim = idle_collective_time(*t, kind, algo, first_n(n), bytes);
            const double closed =
                alpha_beta_time(kind, algo, n, bytes, alpha, beta, t->collective_overhead(), t->protocol_costs());
            EXPECT_NEAR(sim, closed, 1e-9 * closed)
                << preset << " " << collective_kind_name(kind) << " " << algorithm_name(algo) << " n=" << n
                << " bytes=" << bytes;
            seen.insert(std::string(plan_name(collective_plan(*t, kind, algo, first_n(n), bytes))));
          }
        }
      }
    }
    EXPECT_TRUE(seen.count("ring/LL") && seen.count("ring/LL128") && seen.count("ring/Simple")) << preset;
    EXPECT_EQ(seen.count("nvls/Simple"), preset == "dgx_a100" ? 0u : 1u) << preset;
    EXPECT_EQ(seen.count("custom/one-shot") + seen.count("custom/two-shot"), custom ? 2u : 0u) << preset;
    const double p2p = idle_collective_time(*t, CollectiveKind::SendRecv, CollectiveAlgorithm::Auto, {0, 5}, 1e6);
    EXPECT_NEAR(p2p,
                alpha_beta_time(CollectiveKind::SendRecv, CollectiveAlgorithm::Auto, 2, 1e6, alpha, beta,
                                t->collective_overhead(), t->protocol_costs()),
                1e-15);
  }
}

TEST(CollectiveTiming, MixedRingIsBoundByItsSlowestHop) {
  // Four GPUs of two NVLink pairs: the ring 0-1-2-3 alternates NVLink bridges and PCIe paths
  // through the host bridge. The NVLink hops deliver each next chunk before the PCIe path is
  // free, so the PCIe paths carry their 2(n-1) = 6 chunks back to back and the last arrives one
  // PCIe latency later: the slowest hop bounds the ring.
  auto t = topology_from_yaml(std::string("kind: pcie_pairwise_nvlink\nnvlink_bandwidth: 200GB/s\nnvlink_latency: 1us\n"
                                          "pcie_bandwidth: 20GB/s\npcie_latency: 8us\ncollective_overhead: 10us\n") +
                              ks::test_support::kSingleProtocol);
  const double B = 64.0 * 1024 * 1024;
  const double expected = 10e-6 + 6 * (B / 4) / 20e9 + 8e-6;
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, first_n(4), B), expected,
              1e-12);
}

TEST(CollectiveTiming, TwoNodeRingIsBoundByInfiniBandAndConcurrentCollectivesContend) {
  auto t = std::shared_ptr<Topology>(topology_from_yaml("kind: dgx_a100\nnodes: 2\nib_bandwidth: 22GB/s\nlocal_copy_bandwidth: 0GB/s\nnccl_latency_scale: 0\n"));
  const double B = 256.0 * 1024 * 1024;
  const double two_node = idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, first_n(16), B);
  // The ring crosses IB twice; each of those links carries 2(n-1) chunks of B/n at 22 GB/s.
  const double ib_floor = 2.0 * 15 * (B / 16) / 22e9;
  EXPECT_GT(two_node, ib_floor);
  EXPECT_LT(two_node, 1.25 * ib_floor);

  // Two 8-GPU all-reduces on the same GPUs at once: each link carries twice the traffic.
  FabricModel fabric(t);
  const double alone = idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, first_n(8), B);
  fabric.collective(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, first_n(8), B, 0);
  const double both = fabric.collective(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, first_n(8), B, 0).finish;
  EXPECT_NEAR(both / alone, 2.0, 0.05);
}

TEST(CollectiveTiming, EveryRankCopiesItsOwnChunkOnceAtTheKernelsCopyRate) {
  // 4-GPU ring all-gather: 3 steps of B/4 over NVLink, plus one local copy of B/4 at 100 GB/s.
  auto t = topology_from_yaml(
      "kind: hgx_b200\nnvlink_bandwidth: 400GB/s\nnvlink_latency: 2us\ncollective_overhead: 10us\n"
      "nccl_latency_scale: 0\nnvls_efficiency: 0\nlocal_copy_bandwidth: 100GB/s\n");
  const double B = 64.0 * 1024 * 1024;
  const double expected = 10e-6 + (B / 4) / 100e9 + 3 * (2e-6 + (B / 4) / 400e9);
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllGather, CollectiveAlgorithm::Ring, first_n(4), B), expected,
              1e-12);
  // Send/recv keeps nothing locally: no copy.
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::SendRecv, CollectiveAlgorithm::Auto, {0, 1}, B),
              10e-6 + 2e-6 + B / 400e9, 1e-12);
  // The own chunk weighs less in a larger ring: bus bandwidth ((n-1)/n B / time) grows with n.
  double last_bus_bw = 0;
  for (int n : {2, 4, 8}) {
    const double time = idle_collective_time(*t, CollectiveKind::AllGather, CollectiveAlgorithm::Ring, first_n(n), B);
    const double bus_bw = (n - 1.0) / n * B / time;
    EXPECT_GT(bus_bw, last_bus_bw) << n;
    last_bus_bw = bus_bw;
  }
}

TEST(CollectiveTiming, TheEnginesCustomAllReduceReadsPeersOneShotOrTwoShotBelowItsMaximum) {
  // Custom all-reduce below 8 MiB, 3 us fixed; route latency 1 us, 200 GB/s per direction.
  auto t = topology_from_yaml(
      "kind: dgx_h100\nnvlink_bandwidth: 200GB/s\nnvlink_latency: 1us\ncollective_overhead: 20us\n"
      "nccl_latency_scale: 1\nnvls_efficiency: 0\nlocal_copy_bandwidth: 0GB/s\n"
      "custom_allreduce_max_bytes: 8MiB\ncustom_allreduce_latency: 3us\n");
  // 8 GPUs, 64 KiB < 256 KiB: one-shot, every rank reads 7 peers' 64 KiB over its one link:
  // 3 + 1 + 7 x 65536 B / 200 GB/s = 6.29376 us (no NCCL overhead).
  auto plan = collective_plan(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), 65536);
  EXPECT_EQ(plan_name(plan), "custom/one-shot");
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), 65536),
              3e-6 + 1e-6 + 7 * 65536 / 200e9, 1e-12);
  // 1 MiB: two-shot, reduce-scatter then all-gather of 7 x 1 MiB / 8 each, and a third barrier
  // (half the one-shot latency): 1.5 x 3 + 2 x (1 + 4.58752) us.
  plan = collective_plan(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), 1048576);
  EXPECT_EQ(plan_name(plan), "custom/two-shot");
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), 1048576),
              4.5e-6 + 2 * (1e-6 + 7.0 / 8 * 1048576 / 200e9), 1e-12);
  // 2 GPUs: one-shot at any size below the maximum (vLLM); 4 MiB: 3 + 1 + 4 MiB / 200 GB/s.
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(2), 4194304),
              3e-6 + 1e-6 + 4194304 / 200e9, 1e-12);
  // 8 MiB and above, an explicit ring, other kinds: NCCL.
  EXPECT_FALSE(collective_plan(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(8), 8388608).custom);
  EXPECT_FALSE(collective_plan(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, first_n(8), 65536).custom);
  EXPECT_FALSE(collective_plan(*t, CollectiveKind::AllGather, CollectiveAlgorithm::Auto, first_n(8), 65536).custom);
  // PCIe only: vLLM runs it on two GPUs, not on more.
  auto pcie = topology_from_yaml("kind: pcie_l40s\ncustom_allreduce_max_bytes: 8MiB\n");
  EXPECT_TRUE(collective_plan(*pcie, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(2), 65536).custom);
  EXPECT_FALSE(collective_plan(*pcie, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(4), 65536).custom);
  // Off by default in the presets (an engine profile turns it on).
  EXPECT_FALSE(collective_plan(*make_preset("dgx_h100"), CollectiveKind::AllReduce, CollectiveAlgorithm::Auto,
                               first_n(8), 65536)
                   .custom);
}

// Expert parallelism's dispatch/combine (kernels OpKind::AllToAll): n-1 steps in which every rank
// sends bytes/n to one peer (NCCL's point-to-point all-to-all; DeepEP's NVLink kernels move the
// same bytes). On an NVSwitch each GPU's link carries its own transfers, so the time is the
// overhead + (n-1) x (latency + (bytes/n) / link bandwidth) = latency terms + (n-1)/n bytes / link.
TEST(CollectiveTiming, AllToAllOnNvSwitchSendsSevenEighthsOfTheBufferOverEachGpusLink) {
  auto t = topology_from_yaml(std::string("kind: dgx_h100\nnvlink_bandwidth: 200GB/s\nnvlink_latency: 1us\n"
                                          "collective_overhead: 20us\n") + ks::test_support::kSingleProtocol);
  // DeepSeek-V3 decode, 96 routed rows of 7168 bf16 values on the busiest rank: 1,376,256 B.
  const double B = 96.0 * 7168 * 2;
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllToAll, CollectiveAlgorithm::Auto, first_n(8), B),
              20e-6 + 7 * (1e-6 + B / 8 / 200e9), 1e-12);
  // 64 MiB: 20 us + 7 us + 7/8 x 64 MiB / 200 GB/s = 320.6 us.
  const double big = 64.0 * 1024 * 1024;
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllToAll, CollectiveAlgorithm::Auto, first_n(8), big),
              20e-6 + 7e-6 + 0.875 * big / 200e9, 1e-12);
}

TEST(CollectiveTiming, AllToAllAcrossNodesRunsAtTheInfiniBandBandwidth) {
  // One GPU on each of two nodes: one step of bytes/2 over GPU-NIC-switch-NIC-GPU, two IB hops of
  // 2 us each, at the NIC's 50 GB/s (400 Gb/s), far below NVLink.
  auto t = topology_from_yaml(std::string("kind: dgx_h100\nnodes: 2\nnvlink_bandwidth: 200GB/s\nnvlink_latency: 1us\n"
                                          "ib_bandwidth: 50GB/s\nib_latency: 2us\ncollective_overhead: 20us\n") +
                              ks::test_support::kSingleProtocol);
  const double B = 8.0 * 1024 * 1024;
  EXPECT_NEAR(idle_collective_time(*t, CollectiveKind::AllToAll, CollectiveAlgorithm::Auto, {0, 8}, B),
              20e-6 + 4e-6 + (B / 2) / 50e9, 1e-12);
}

// Physics every preset must follow, whatever its fitted values: an all-reduce never gets faster
// as it grows; more link bandwidth speeds large (bandwidth-bound) messages, by at most the
// bandwidth ratio; small (latency-bound) messages barely notice it.
TEST(CollectivePhysics, AllReduceIsMonotoneInSizeAndOnlyLargeMessagesFollowTheBandwidth) {
  for (const std::string preset : {"dgx_a100", "dgx_h100", "hgx_h200", "hgx_b200", "pcie_l40s"}) {
    const bool pcie = preset == "pcie_l40s";
    for (bool custom : {false, true}) {
      const std::string base = "kind: " + preset + "\n" + (custom ? "custom_allreduce_max_bytes: 8MiB\n" : "");
      auto t = topology_from_yaml(base);
      auto t_link = make_preset(preset);
      // Twice every link's bandwidth the collectives cross (NVLink; PCIe and the host path).
      const double link = pcie ? t_link->path_bandwidth(0, 1) : t_link->path_bandwidth(0, 1);
      std::string faster = base + (pcie ? "pcie_bandwidth: " : "nvlink_bandwidth: ") + std::to_string(2 * link) + "B/s\n";
      if (pcie) faster += "host_bandwidth: " + std::to_string(2 * t_link->path_bandwidth(1, 2)) + "B/s\n";
      auto t2 = topology_from_yaml(faster);
      for (int n : {2, 4, 8}) {
        double previous = 0;
        for (double bytes = 256; bytes <= 1 << 30; bytes *= 2) {
          const double time = idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(n), bytes);
          EXPECT_GE(time, previous * (1 - 1e-12)) << preset << " custom=" << custom << " n=" << n << " bytes=" << bytes;
          previous = time;
        }
        const double small = idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(n), 1024);
        const double small2 = idle_collective_time(*t2, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(n), 1024);
        EXPECT_LE(small2, small) << preset << " n=" << n;
        EXPECT_GT(small2, 0.95 * small) << preset << " n=" << n << ": 1 KiB is latency-bound";
        const double big = idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(n), 1 << 30);
        const double big2 = idle_collective_time(*t2, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(n), 1 << 30);
        EXPECT_LT(big2, 0.75 * big) << preset << " n=" << n << ": 1 GiB is bandwidth-bound";
        EXPECT_GE(big2, 0.5 * big * (1 - 1e-9)) << preset << " n=" << n << ": at most the bandwidth ratio";
      }
    }
  }
}

// pcie_l40s: a pair of GPUs shares a PCIe switch, so its all-reduce never touches the host bridge;
// four GPUs span two switches and their ring crosses it, so they follow the host path's rate.
TEST(CollectivePhysics, PcieAllReduceBetweenPairsFollowsTheHostBridgeAndAPairDoesNot) {
  auto time = [](const std::string& host, int n) {
    auto t = topology_from_yaml("kind: pcie_l40s\nhost_bandwidth: " + host + "\n");
    return idle_collective_time(*t, CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(n), 256.0 * (1 << 20));
  };
  EXPECT_DOUBLE_EQ(time("4GB/s", 2), time("8GB/s", 2));
  EXPECT_GT(time("4GB/s", 4), 1.8 * time("8GB/s", 4));
  // Per byte of bus traffic, the ring between pairs is slower than within a pair.
  const double bus2 = 2.0 * 1 / 2 / time("5GB/s", 2), bus4 = 2.0 * 3 / 4 / time("5GB/s", 4);
  EXPECT_LT(bus4, bus2);
}
