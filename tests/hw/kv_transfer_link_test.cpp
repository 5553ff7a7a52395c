// KV-cache copies between replicas (hw/gpu/kv_transfer_link.hpp) on the built-in fabric, timed
// by hand from the link parameters the test sets: an idle NVSwitch route, two copies sharing a
// GPU's link, InfiniBand across nodes, and what layer-wise streaming leaves exposed. One
// elaboration per TEST (each runs in its own process).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "hw/gpu/kv_transfer_link.hpp"
#include "hw/interconnect/interconnect_kind.hpp"
#include "sc_modules/sim/sim.hpp"
#include "tests/support/topology_yaml.hpp"

using namespace ks;

namespace {

// A DGX-like node pair: 100 GB/s per GPU and direction into the NVSwitch, 2 us GPU-to-GPU (1 us a
// hop); InfiniBand 25 GB/s per NIC, 5 us a hop (GPU -> NIC -> IB switch -> NIC -> GPU: 10 us).
constexpr double kNvBw = 100e9, kNvLat = 2e-6, kIbBw = 25e9, kIbLat = 10e-6;

struct Rig {
  sim::Environment env;
  std::shared_ptr<interconnect::Topology> topology;
  std::unique_ptr<hw::InterconnectParts> fabric;
  std::unique_ptr<hw::KvTransferLink> link;
  Rig() {
    topology = test_support::topology_from_yaml(
        "kind: dgx_h100\nnodes: 2\nnvlink_bandwidth: 100GB/s\nnvlink_latency: 2us\nib_bandwidth: 25GB/s\n"
        "ib_latency: 5us\n");
    fabric = hw::make_fabric("fabric", topology);
    link = std::make_unique<hw::KvTransferLink>("kv", topology);
    fabric->bind(link->fabric_socket);
  }
  // Runs `copies` from t = `at` seconds; returns the result.
  proto::KvTransferResult run(const std::vector<proto::KvShardCopy>& copies, proto::KvStreaming streaming, double at = 0) {
    proto::KvTransferResult r;
    env.process([&, copies, streaming, at] {
      if (at > 0) env.hold(sim::seconds(at));
      r = link->transfer(copies, streaming, 7);
    });
    env.run();
    return r;
  }
};

}  // namespace

TEST(KvTransferLink, IdleNvSwitchRouteTakesLatencyPlusBytesOverBandwidth) {
  Rig rig;
  // 80 layer pieces of 1 MB each cross gpu0 -> NVSwitch -> gpu4 back to back: the last arrives
  // after 80 MB / 100 GB/s = 0.8 ms of link time plus the route's 2 us.
  const auto r = rig.run({{0, 4, 80e6}}, {80, 0.0});
  EXPECT_NEAR(r.arrival.to_seconds(), 80e6 / kNvBw + kNvLat, 1e-11);
  EXPECT_DOUBLE_EQ(r.bytes, 80e6);
  EXPECT_DOUBLE_EQ(r.sent_bytes, 80e6);
  EXPECT_EQ(rig.link->stats().copies, 1u);
}

TEST(KvTransferLink, RankPairsOnTheirOwnLinksRunInParallel) {
  Rig rig;
  // Four TP ranks 0-3 -> 4-7: each pair has its own GPU links, so all four arrive together.
  std::vector<proto::KvShardCopy> copies;
  for (int r = 0; r < 4; ++r) copies.push_back({r, 4 + r, 20e6});
  const auto res = rig.run(copies, {80, 0.0}, 1e-3);
  EXPECT_NEAR(res.arrival.to_seconds(), 1e-3 + 20e6 / kNvBw + kNvLat, 1e-11);
  EXPECT_DOUBLE_EQ(res.bytes, 80e6);
}

TEST(KvTransferLink, TwoCopiesFromOneGpuShareItsLinkOneAfterTheOther) {
  Rig rig;
  // gpu0 sends 40 MB to gpu4 and 40 MB to gpu5 at the same time: both need gpu0 -> NVSwitch. The
  // first copy's 80 pieces take the link for 0.4 ms, the second's follow: it arrives at 0.8 ms + 2 us.
  proto::KvTransferResult first, second;
  rig.env.process([&] {
    first = rig.link->transfer({{0, 4, 40e6}}, {80, 0.0}, 1);
    second = rig.link->transfer({{0, 5, 40e6}}, {80, 0.0}, 2);
  });
  rig.env.run();
  EXPECT_NEAR(first.arrival.to_seconds(), 40e6 / kNvBw + kNvLat, 1e-11);
  EXPECT_NEAR(second.arrival.to_seconds(), 2 * 40e6 / kNvBw + kNvLat, 1e-11);
  // Alone, the second would have taken as long as the first.
  EXPECT_GT(second.arrival.to_seconds() - first.arrival.to_seconds(), 0.39e-3);
}

TEST(KvTransferLink, AcrossNodesTheCopyCrossesInfiniBand) {
  Rig rig;
  // gpu0 (node 0) -> gpu8 (node 1): GPU -> NIC (PCIe at the NIC's rate, no latency) -> IB switch ->
  // NIC -> GPU: 25 GB/s bottleneck, 2 x 5 us.
  const auto r = rig.run({{0, 8, 10e6}}, {80, 0.0});
  EXPECT_NEAR(r.arrival.to_seconds(), 10e6 / kIbBw + kIbLat, 1e-11);
}

TEST(KvTransferLink, LayerwiseStreamingLeavesTheLastLayerExposedWhenTheLinkKeepsUp) {
  // 80 MB over 80 layers during a 10 ms prefill on a 100 GB/s route: each layer's 1 MB takes 10 us
  // to send and the layers come every 125 us, so only the last layer's piece is left when the
  // prefill ends: 1 MB -> 10 us + 2 us.
  EXPECT_DOUBLE_EQ(hw::KvTransferLink::exposed_bytes(80e6, kNvBw, {80, 10e-3}), 1e6);
  Rig rig;
  const auto r = rig.run({{0, 4, 80e6}}, {80, 10e-3});
  EXPECT_NEAR(r.arrival.to_seconds(), 1e6 / kNvBw + kNvLat, 1e-11);
  EXPECT_DOUBLE_EQ(r.sent_bytes, 1e6);
  EXPECT_DOUBLE_EQ(r.bytes, 80e6);
}

TEST(KvTransferLink, LayerwiseStreamingOverASlowLinkLeavesTheBacklog) {
  // The same 80 MB across nodes at 25 GB/s (3.2 ms of link time) during a 1 ms prefill: the first
  // 79 layers' window, 1 ms x 79/80, hides 25 GB/s x 0.9875 ms = 24.6875 MB; 55.3125 MB are left.
  const double left = 80e6 - kIbBw * 1e-3 * 79.0 / 80.0;
  EXPECT_DOUBLE_EQ(hw::KvTransferLink::exposed_bytes(80e6, kIbBw, {80, 1e-3}), left);
  Rig rig;
  const auto r = rig.run({{0, 8, 80e6}}, {80, 1e-3});
  EXPECT_NEAR(r.arrival.to_seconds(), left / kIbBw + kIbLat, 1e-11);
  // Whole-cache mode on the same route exposes all of it.
  EXPECT_DOUBLE_EQ(hw::KvTransferLink::exposed_bytes(80e6, kIbBw, {80, 0.0}), 80e6);
}
