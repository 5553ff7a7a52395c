// The fabric a scenario gets when it names no topology: measured where the GPU's system was
// measured, transferred from the spec sheet where it was not, and a link what-if moves it.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "hw/interconnect/fabric_model.hpp"
#include "hw/interconnect/fabric_transfer.hpp"
#include "hw/interconnect/topology_presets.hpp"

namespace ks::interconnect {
namespace {

std::vector<int> first_n(int n) {
  std::vector<int> g(static_cast<std::size_t>(n));
  std::iota(g.begin(), g.end(), 0);
  return g;
}

double all_reduce_time(const Topology& t, int n, double bytes) {
  FabricModel fabric(std::shared_ptr<const Topology>(&t, [](const Topology*) {}));
  return fabric.collective(CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, first_n(n), bytes, 0).finish;
}

// The catalogue's figures (data/gpus/*.yaml), bidirectional per GPU.
const ScaleUpLinks kH100{"h100_sxm", "nvidia", "hopper", "", 900e9, 128e9};
const ScaleUpLinks kL40s{"l40s", "nvidia", "ada", "", 0, 64e9};

TEST(FabricTransfer, AMeasuredGpuRunsOnItsSystemsFit) {
  for (const auto& [gpu, kind] : std::vector<std::pair<ScaleUpLinks, std::string>>{
           {kH100, "dgx_h100"},
           {{"h200", "nvidia", "hopper", "", 900e9, 128e9}, "hgx_h200"},
           {{"B200", "nvidia", "blackwell", "", 1800e9, 256e9}, "hgx_b200"},
           {{"a100_sxm_40gb", "nvidia", "ampere", "", 600e9, 64e9}, "dgx_a100"},
           {{"a100_pcie_80gb", "nvidia", "ampere", "bridge", 600e9, 64e9}, "pcie_pairwise_nvlink"},
           {kL40s, "pcie_l40s"}}) {
    const DefaultFabric f = default_fabric(gpu);
    EXPECT_EQ(f.kind, kind) << gpu.gpu;
    // The preset as fitted; a bridged-pairs server holds 8 GPUs, as the other servers do.
    for (const auto& [key, value] : f.params) EXPECT_EQ(key, "gpus_per_node") << gpu.gpu;
    if (kind == "pcie_pairwise_nvlink") {
      EXPECT_EQ(f.params.at("gpus_per_node"), 8);
    }
    EXPECT_NE(f.basis.find("measured"), std::string::npos) << f.basis;
  }
}

// A what-if of the GPU's link: the measured system's costs, its link scaled by the spec ratio, so
// a bandwidth-bound all-reduce runs at the new rate and a latency-bound one does not move.
TEST(FabricTransfer, TwiceTheLinkSpeedsALargeAllReduceUpToTheBandwidthRatioAndLeavesASmallOne) {
  ScaleUpLinks fast = kH100;
  fast.nvlink_bandwidth = 1800e9;
  const DefaultFabric f = default_fabric(fast);
  EXPECT_EQ(f.kind, "dgx_h100");
  EXPECT_NEAR(f.params.at("nvlink_bandwidth"), 2 * preset_defaults("dgx_h100").number("nvlink_bandwidth"), 1e8);
  const auto base = make_default_fabric(kH100), twice = make_default_fabric(fast);
  const double big = 1024.0 * 1024 * 1024, small = 4096;
  // Never better than the bandwidth ratio; not all of it either: a rank's own chunk (bytes / n) is
  // copied at the kernel's rate, which a faster link leaves alone, so more ranks come closer to 1/2.
  double previous = 1.0;
  for (int n : {2, 4, 8}) {
    const double ratio = all_reduce_time(*twice, n, big) / all_reduce_time(*base, n, big);
    EXPECT_GT(ratio, 0.5) << n;
    EXPECT_LT(ratio, 0.7) << n;
    EXPECT_LT(ratio, previous) << n;
    previous = ratio;
    EXPECT_NEAR(all_reduce_time(*twice, n, small) / all_reduce_time(*base, n, small), 1.0, 0.05) << n;
  }
  EXPECT_LT(previous, 0.6);
  // PCIe-only: the link and the host bridge's rate follow the PCIe generation.
  ScaleUpLinks gen5 = kL40s;
  gen5.pcie_bandwidth = 128e9;
  const DefaultFabric p = default_fabric(gen5);
  EXPECT_NEAR(p.params.at("pcie_bandwidth"), 2 * preset_defaults("pcie_l40s").number("pcie_bandwidth"), 1e8);
  EXPECT_NEAR(p.params.at("host_bandwidth"), 2 * preset_defaults("pcie_l40s").number("host_bandwidth"), 1e8);
}

TEST(FabricTransfer, AnUnmeasuredSwitchGpuGetsItsSpecLinkAtTheMeasuredSystemsEfficiency) {
  const SwitchTransfer t = switch_transfer();
  // The measured NVSwitch systems reach 0.63-0.75 of their spec link (docs/hardware.md).
  EXPECT_GT(t.link_ratio, 0.6);
  EXPECT_LT(t.link_ratio, 0.76);
  // A Blackwell GPU without a preset (a B300-like spec): NVLS on, NCCL's Blackwell figures.
  const DefaultFabric b = default_fabric({"my_blackwell", "nvidia", "blackwell", "", 1800e9, 256e9});
  EXPECT_EQ(b.kind, "nvswitch");
  EXPECT_NEAR(b.params.at("nvlink_bandwidth"), 900e9 * t.link_ratio, 1e8);
  EXPECT_NEAR(b.params.at("nvls_efficiency"), 0.74 * t.nvls_ratio, 1e-3);
  EXPECT_NEAR(b.params.at("nvls_latency"), t.nvls_latency, 1e-9);
  EXPECT_NEAR(b.params.at("ll_max_bandwidth"), 282e9, 1e8);
  EXPECT_NE(b.basis.find("transferred"), std::string::npos);
  // AMD's Infinity Fabric: the same switch model at its aggregate rate, no NVLS, no NCCL LL cap.
  const DefaultFabric amd = default_fabric({"mi300x", "amd", "cdna3", "", 896e9, 128e9});
  EXPECT_EQ(amd.kind, "nvswitch");
  EXPECT_NEAR(amd.params.at("nvlink_bandwidth"), 448e9 * t.link_ratio, 1e8);
  EXPECT_EQ(amd.params.at("nvls_efficiency"), 0.0);
  EXPECT_EQ(amd.params.at("ll_max_bandwidth"), 0.0);
  // Bridged pairs and PCIe-only cards.
  const DefaultFabric bridge = default_fabric({"h100_pcie", "nvidia", "hopper", "bridge", 600e9, 128e9});
  EXPECT_EQ(bridge.kind, "pcie_pairwise_nvlink");
  EXPECT_NEAR(bridge.params.at("nvlink_bandwidth"), preset_defaults("pcie_pairwise_nvlink").number("nvlink_bandwidth"), 1e8);
  EXPECT_NEAR(bridge.params.at("pcie_bandwidth"), 48e9, 1e8);  // Gen5 x16 at the L40S fit's 0.75
  const DefaultFabric l4 = default_fabric({"l4", "nvidia", "ada", "", 0, 64e9});
  EXPECT_EQ(l4.kind, "pcie_l40s");
  EXPECT_NEAR(l4.params.at("pcie_bandwidth"), preset_defaults("pcie_l40s").number("pcie_bandwidth"), 1e8);
}

// The generic node's own figures are the means of the measured NVSwitch presets' (a refit of those
// must carry over), and an H100-class GPU priced through it lands near the measured H100 system.
TEST(FabricTransfer, TheGenericNodeIsTheMeanOfTheMeasuredSystems) {
  const char* measured[] = {"dgx_a100", "dgx_h100", "hgx_h200", "hgx_b200"};
  const config::Params generic = preset_defaults("nvswitch");
  for (const char* key : {"nvlink_latency", "collective_overhead", "nccl_latency_scale", "custom_allreduce_latency"}) {
    double mean = 0;
    for (const char* m : measured) mean += preset_defaults(m).number(key) / 4;
    EXPECT_NEAR(generic.number(key), mean, 0.005 * mean) << key;
  }
  const SwitchTransfer t = switch_transfer();
  EXPECT_NEAR(generic.number("nvlink_bandwidth"), 450e9 * t.link_ratio, 0.002 * 450e9);
  EXPECT_NEAR(generic.number("local_copy_bandwidth"), 450e9 * t.local_copy_ratio, 0.002 * 450e9);
  // Leaving Hopper out, NVLS is learned from B200 alone: its fitted efficiency over NCCL's 0.74.
  const SwitchTransfer without_hopper = switch_transfer({"dgx_h100", "hgx_h200"});
  EXPECT_NEAR(without_hopper.nvls_ratio, preset_defaults("hgx_b200").number("nvls_efficiency") / 0.74, 1e-9);
  EXPECT_NEAR(without_hopper.means.at("nccl_latency_scale"),
              (preset_defaults("dgx_a100").number("nccl_latency_scale") + preset_defaults("hgx_b200").number("nccl_latency_scale")) / 2,
              1e-9);
  EXPECT_THROW(switch_transfer({"dgx_a100", "dgx_h100", "hgx_h200", "hgx_b200"}), std::invalid_argument);
  const auto like_h100 = make_default_fabric({"not_in_the_catalogue", "nvidia", "hopper", "", 900e9, 128e9});
  const auto h100 = make_default_fabric(kH100);
  for (double bytes : {64.0 * 1024 * 1024, 512.0 * 1024 * 1024}) {
    const double ratio = all_reduce_time(*like_h100, 8, bytes) / all_reduce_time(*h100, 8, bytes);
    EXPECT_NEAR(ratio, 1.0, 0.15) << bytes;
  }
}

}  // namespace
}  // namespace ks::interconnect
