// Topology presets: which links a transfer crosses, and link-level contention.
#include <gtest/gtest.h>

#include "hw/interconnect/fabric_model.hpp"
#include "hw/interconnect/topology_presets.hpp"
#include "base/config/document.hpp"
#include "tests/support/topology_yaml.hpp"

using namespace ks;
using namespace ks::interconnect;

namespace {

std::vector<LinkType> route_types(const Topology& t, int src, int dst) {
  std::vector<LinkType> types;
  for (int l : t.route(src, dst)) types.push_back(t.links()[static_cast<std::size_t>(l)].type);
  return types;
}

using test_support::topology_from_yaml;
std::unique_ptr<Topology> from_yaml(const std::string& yaml) { return topology_from_yaml(yaml); }

}  // namespace

TEST(Topology, NvSwitchRoutesThroughTheSwitchAndInfiniBandAcrossNodes) {
  auto t = from_yaml("kind: dgx_a100\nnodes: 2\nib_bandwidth: 22GB/s\nib_latency: 10us\nnvlink_latency: 7us\n");
  EXPECT_EQ(t->num_gpus(), 16);
  EXPECT_EQ(route_types(*t, 0, 7), (std::vector<LinkType>{LinkType::NVLink, LinkType::NVLink}));
  EXPECT_EQ(route_types(*t, 3, 12),
            (std::vector<LinkType>{LinkType::PCIe, LinkType::InfiniBand, LinkType::InfiniBand, LinkType::PCIe}));
  // Bottleneck across nodes is the NIC, latency two IB hops.
  EXPECT_DOUBLE_EQ(t->path_bandwidth(3, 12), 22e9);
  EXPECT_DOUBLE_EQ(t->path_latency(3, 12), 2 * 10e-6);
  EXPECT_DOUBLE_EQ(t->path_latency(0, 7), 7e-6);
}

TEST(Topology, PairwiseNvlinkUsesTheBridgeWithinAPairAndPcieAcross) {
  auto t = from_yaml("kind: pcie_pairwise_nvlink\npcie_latency: 10us\npcie_bandwidth: 24GB/s\n");
  EXPECT_EQ(route_types(*t, 0, 1), (std::vector<LinkType>{LinkType::NVLink}));
  EXPECT_EQ(route_types(*t, 1, 2), std::vector<LinkType>(4, LinkType::PCIe));
  EXPECT_NEAR(t->path_latency(1, 2), 10e-6, 1e-18);  // pcie_latency is the whole path's
  EXPECT_DOUBLE_EQ(t->path_bandwidth(1, 2), 24e9);
}

TEST(Topology, YamlOverridesLinkParametersAndRejectsBadValues) {
  auto t = from_yaml("kind: dgx_h100\nnvlink_bandwidth: 100GB/s\nnvlink_latency: 1us\ngpus_per_node: 4\n");
  EXPECT_EQ(t->num_gpus(), 4);
  EXPECT_DOUBLE_EQ(t->path_bandwidth(0, 3), 100e9);
  EXPECT_DOUBLE_EQ(t->path_latency(0, 3), 1e-6);
  EXPECT_THROW(from_yaml("kind: dgx_h100\nnvlink_bandwidth: 100GB\n"), config::ConfigError);
  EXPECT_THROW(from_yaml("kind: pcie_pairwise_nvlink\ngpus_per_node: 3\n"), config::ConfigError);
  EXPECT_THROW(from_yaml("kind: dgx_z100\n"), config::ConfigError);
  EXPECT_THROW(t->route(0, 4), std::invalid_argument);
}

TEST(LinkContention, TwoTransfersOnOneLinkTakeTwiceAsLongAsOne) {
  auto topo = std::shared_ptr<Topology>(from_yaml("kind: dgx_h100\nnvlink_bandwidth: 360GB/s\nnvlink_latency: 6us\n"));
  const double bytes = 1024.0 * 1024 * 1024;  // 1 GiB
  FabricModel alone(topo);
  const double one = alone.transfer(0, 1, bytes, 0).finish;
  // Independently: 6 us + 1 GiB / 360 GB/s.
  EXPECT_NEAR(one, 6e-6 + bytes / 360e9, 1e-12);

  FabricModel shared(topo);
  shared.transfer(0, 1, bytes, 0);
  const double second = shared.transfer(0, 2, bytes, 0).finish;  // shares gpu0's uplink
  EXPECT_NEAR(second / one, 2.0, 0.01);

  FabricModel disjoint(topo);
  disjoint.transfer(0, 1, bytes, 0);
  EXPECT_NEAR(disjoint.transfer(2, 3, bytes, 0).finish, one, 1e-12);  // other GPUs' links: no queueing
  EXPECT_EQ(shared.links()[static_cast<std::size_t>(topo->route(0, 1)[0])].transfers(), 2u);
}

// A host that runs ahead reserves links for later times; a transfer issued afterwards but ready
// earlier takes the gap before them when it fits, and otherwise the first gap that does, on
// every link of its route at once. dgx_h100: 360 GB/s, 6 us per GPU -> NVSwitch -> GPU route.
TEST(LinkContention, ATransferReadyEarlierUsesTheGapBeforeLaterReservations) {
  auto topo = std::shared_ptr<Topology>(make_preset("dgx_h100"));
  // Every GPU pair of the preset has the same route shape (uplink, switch, downlink).
  const double mb = 1e6, hold = mb / topo->path_bandwidth(0, 1), latency = topo->path_latency(0, 1);
  FabricModel fabric(topo);
  // Reserved first: gpu0 -> gpu1 at 100 us, then gpu2 -> gpu1 right after it (the downlink into
  // gpu1 is busy from 100 us to 100 us + 2 holds).
  EXPECT_NEAR(fabric.transfer(0, 1, mb, 100e-6).start, 100e-6, 1e-15);
  EXPECT_NEAR(fabric.transfer(2, 1, mb, 100e-6 + hold).start, 100e-6 + hold, 1e-15);
  // Ready at 0: fits before them (not queued behind).
  const TransferTiming early = fabric.transfer(3, 1, mb, 0);
  EXPECT_NEAR(early.start, 0, 1e-15);
  EXPECT_NEAR(early.finish, hold + latency, 1e-12);
  // Ready at 100 us - half a hold: the gap before 100 us is too short; the downlink is free again
  // at 100 us + 2 holds.
  const TransferTiming late = fabric.transfer(4, 1, mb, 100e-6 - 0.5 * hold);
  EXPECT_NEAR(late.start, 100e-6 + 2 * hold, 1e-12);
  // A transfer from gpu0 (its uplink busy 100 us .. + 1 hold) to gpu5 (idle) ready at 99 us:
  // both links must be free at once, so it starts after gpu0's uplink frees.
  EXPECT_NEAR(fabric.transfer(0, 5, mb, 99e-6).start, 100e-6 + hold, 1e-12);
}

TEST(Topology, PcieL40sPairsGpusOnPcieSwitchesAndCrossesTheHostBridgeBetweenPairs) {
  auto t = from_yaml("kind: pcie_l40s\npcie_bandwidth: 24GB/s\nhost_bandwidth: 5GB/s\npcie_latency: 2us\n");
  // Within a pair: GPU -> PCIe switch -> GPU at the link rate.
  EXPECT_EQ(route_types(*t, 0, 1), std::vector<LinkType>(2, LinkType::PCIe));
  EXPECT_DOUBLE_EQ(t->path_bandwidth(0, 1), 24e9);
  // Between pairs: up through the switch to the host bridge and down: the host path is the limit.
  EXPECT_EQ(route_types(*t, 1, 2), std::vector<LinkType>(4, LinkType::PCIe));
  EXPECT_DOUBLE_EQ(t->path_bandwidth(1, 2), 5e9);
  EXPECT_NEAR(t->path_latency(1, 2), t->path_latency(0, 1), 1e-18);  // pcie_latency is the path's
  EXPECT_NEAR(t->path_latency(0, 1), 2e-6, 1e-18);
}

// `kernelsight list` shows each preset's doc line; its nominal link rate ("N GB/s per direction")
// must bound the preset's effective (fitted) bandwidth from above, and the fitted rate must be a
// plausible fraction of it (NCCL reaches 50-90% of a link's rate, docs/validation-collectives.md).
TEST(Topology, PresetsAgreeWithTheNominalLinkRateThatListShows) {
  auto nominal = [](const std::string& doc) {
    const auto at = doc.find(" GB/s per direction");
    EXPECT_NE(at, std::string::npos) << doc;
    auto begin = doc.find_last_not_of("0123456789.", at - 1) + 1;
    return std::stod(doc.substr(begin, at - begin)) * 1e9;
  };
  for (const char* kind : {"dgx_a100", "dgx_h100", "hgx_h200", "hgx_b200", "pcie_pairwise_nvlink", "pcie_l40s"}) {
    const auto& entry = topology_registry().get(kind, {}, "topology");
    const double spec = nominal(entry.doc);
    auto t = make_preset(kind);
    const LinkType type = std::string(kind) == "pcie_l40s" ? LinkType::PCIe : LinkType::NVLink;
    double fitted = 0;
    for (const auto& l : t->links())
      if (l.type == type && l.from < t->num_gpus()) fitted = std::max(fitted, l.bandwidth);
    EXPECT_LE(fitted, spec) << kind;
    EXPECT_GE(fitted, 0.5 * spec) << kind;
  }
  // The NVLink generations the docs name: NVLink 3 < NVLink 4 (H100 = H200) < NVLink 5.
  auto bw = [&](const char* kind) { return nominal(topology_registry().get(kind, {}, "topology").doc); };
  EXPECT_LT(bw("dgx_a100"), bw("dgx_h100"));
  EXPECT_EQ(bw("dgx_h100"), bw("hgx_h200"));
  EXPECT_LT(bw("hgx_h200"), bw("hgx_b200"));
}
