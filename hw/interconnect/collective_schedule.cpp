#include "hw/interconnect/collective_schedule.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>


namespace ks::interconnect {
namespace {

int ceil_log2(int n) {
  int steps = 0;
  while ((1 << steps) < n) ++steps;
  return steps;
}

// Binomial tree rooted at index 0: in step s, index i with i mod 2^(s+1) == 2^s sends to i - 2^s.
std::vector<CollectiveStep> tree_reduce_broadcast(const std::vector<int>& g, double bytes) {
  const int n = static_cast<int>(g.size());
  const int levels = ceil_log2(n);
  std::vector<CollectiveStep> steps;
  for (int s = 0; s < levels; ++s) {
    CollectiveStep step;
    for (int i = 1 << s; i < n; i += 1 << (s + 1)) step.push_back({g[static_cast<std::size_t>(i)], g[static_cast<std::size_t>(i - (1 << s))], bytes});
    steps.push_back(std::move(step));
  }
  for (int s = levels - 1; s >= 0; --s) {  // broadcast: the same edges reversed
    CollectiveStep step;
    for (int i = 1 << s; i < n; i += 1 << (s + 1)) step.push_back({g[static_cast<std::size_t>(i - (1 << s))], g[static_cast<std::size_t>(i)], bytes});
    steps.push_back(std::move(step));
  }
  return steps;
}

int step_count(CollectiveKind kind, CollectiveAlgorithm algorithm, int n) {
  if (kind == CollectiveKind::SendRecv) return 1;
  if (algorithm == CollectiveAlgorithm::Tree) return 2 * ceil_log2(n);
  return kind == CollectiveKind::AllReduce ? 2 * (n - 1) : n - 1;
}

}  // namespace

CollectiveAlgorithm resolve_algorithm(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks,
                                      double bytes) {
  (void)kind, (void)ranks, (void)bytes;
  // Ring: what NCCL uses inside a node and what the fitted link parameters assume
  // (docs/validation-collectives.md). Tree must be asked for explicitly.
  return algorithm == CollectiveAlgorithm::Auto ? CollectiveAlgorithm::Ring : algorithm;
}

std::vector<CollectiveStep> collective_schedule(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                                const std::vector<int>& group, double bytes) {
  const int n = static_cast<int>(group.size());
  if (n < 2) throw std::invalid_argument("a collective needs at least 2 ranks");
  if (std::set<int>(group.begin(), group.end()).size() != group.size())
    throw std::invalid_argument("a collective's group lists a GPU twice");
  if (bytes < 0) throw std::invalid_argument("collective size must be >= 0");
  algorithm = resolve_algorithm(kind, algorithm, n, bytes);
  if (algorithm == CollectiveAlgorithm::Tree && kind != CollectiveKind::AllReduce)
    throw std::invalid_argument("the tree algorithm is implemented for all-reduce only");

  auto at = [&](int i) { return group[static_cast<std::size_t>(((i % n) + n) % n)]; };
  std::vector<CollectiveStep> steps;
  switch (kind) {
    case CollectiveKind::SendRecv:
      if (n != 2) throw std::invalid_argument("send/recv needs exactly 2 ranks");
      steps.push_back({{group[0], group[1], bytes}});
      return steps;
    case CollectiveKind::AllToAll:
      for (int s = 1; s < n; ++s) {
        CollectiveStep step;
        for (int i = 0; i < n; ++i) step.push_back({at(i), at(i + s), bytes / n});
        steps.push_back(std::move(step));
      }
      return steps;
    case CollectiveKind::AllReduce:
      if (algorithm == CollectiveAlgorithm::Tree) return tree_reduce_broadcast(group, bytes);
      [[fallthrough]];
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter: {
      // Ring: every rank passes one chunk of bytes/n to its successor per step.
      for (int s = 0; s < step_count(kind, algorithm, n); ++s) {
        CollectiveStep step;
        for (int i = 0; i < n; ++i) step.push_back({at(i), at(i + 1), bytes / n});
        steps.push_back(std::move(step));
      }
      return steps;
    }
  }
  return steps;
}

std::pair<int, double> steps_and_chunk(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes) {
  algorithm = resolve_algorithm(kind, algorithm, ranks, bytes);
  const bool whole = kind == CollectiveKind::SendRecv || algorithm == CollectiveAlgorithm::Tree;
  return {step_count(kind, algorithm, ranks), whole ? bytes : bytes / ranks};
}

double local_copy_bytes(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes) {
  return kind == CollectiveKind::SendRecv ? 0.0 : steps_and_chunk(kind, algorithm, ranks, bytes).second;
}

double local_copy_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes,
                       const ProtocolCosts& costs) {
  if (costs.local_copy_bandwidth <= 0) return 0.0;
  return local_copy_bytes(kind, algorithm, ranks, bytes) / costs.local_copy_bandwidth;
}

namespace {

// NCCL's tuner constants in µs, NVIDIA/nccl commit 5067397c2676d5aed50042fc39e5c8ee96eb0027,
// src/graph/tuning.cc, ncclTunerConstantsDefaults; index [algorithm: tree, ring, nvls][protocol:
// LL, LL128, Simple].
constexpr double kBaseLatency[3][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}};
// hwLatencies[hw][algorithm][protocol], hw = NVLINK, PCI, NET.
constexpr double kHwLatency[3][3][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}},
};

}  // namespace

std::optional<CollectivePlan> make_plan(CollectiveKind kind, CollectiveAlgorithm schedule, bool nvls,
                                        CollectiveProtocol protocol, int ranks, double alpha, double beta,
                                        HopKind hop, const ProtocolCosts& costs) {
  const int p = static_cast<int>(protocol);
  const int hw = static_cast<int>(hop);
  // NCCL enables LL128 only on NVLink paths (tuning.cc: typeIntra <= PATH_NVB) and the network.
  if (protocol == CollectiveProtocol::LL128 && hop == HopKind::PCIe) return std::nullopt;
  CollectivePlan plan;
  plan.protocol = protocol;
  const double us = 1e-6 * costs.latency_scale;
  if (nvls) {
    // NVLS: all-reduce in one NVSwitch node, Simple only; NCCL's latency is the hop latency alone.
    if (kind != CollectiveKind::AllReduce || costs.nvls_efficiency <= 0 || hop == HopKind::Network ||
        protocol != CollectiveProtocol::Simple)
      return std::nullopt;
    plan.nvls = true;
    plan.schedule = CollectiveAlgorithm::Ring;
    const int steps = steps_and_chunk(kind, CollectiveAlgorithm::Ring, ranks, 0).first;
    const double latency = costs.nvls_latency > 0 ? costs.nvls_latency : us * kHwLatency[hw][2][p];
    plan.fixed_latency = std::max(0.0, latency - steps * alpha);
    // Bus bandwidth 2 e beta; the ring's 2(n-1) steps of bytes/n reach it at a factor 2e.
    plan.effect = {0.0, 2 * costs.nvls_efficiency};
    return plan;
  }
  const bool tree = schedule == CollectiveAlgorithm::Tree;
  if (tree && kind != CollectiveKind::AllReduce) return std::nullopt;
  plan.schedule = tree ? CollectiveAlgorithm::Tree : CollectiveAlgorithm::Ring;
  const int a = tree ? 0 : 1;
  plan.fixed_latency = us * kBaseLatency[a][p];
  plan.effect.extra_latency = std::max(0.0, us * kHwLatency[hw][a][p] - alpha);
  double factor = 1.0;
  if (tree) {
    // tuning.cc: tree all-reduce x0.92, then LL /3.8, LL128 x7/9 in one node (x120/128 across).
    factor = 0.92 * (protocol == CollectiveProtocol::LL      ? 1.0 / 3.8
                     : protocol == CollectiveProtocol::LL128 ? (hop == HopKind::Network ? 120.0 / 128.0 : 7.0 / 9.0)
                                                             : 1.0);
  } else if (protocol == CollectiveProtocol::LL) {
    factor = 0.5;  // tuning.cc: ring LL busBw = min(llMaxBw, busBw * .5)
  } else if (protocol == CollectiveProtocol::LL128) {
    factor = 0.92;  // tuning.cc: ring LL128 busBw * 0.92 (120/128)
  }
  if (protocol == CollectiveProtocol::LL && costs.ll_max_bandwidth > 0 && beta > 0)
    factor = std::min(factor, costs.ll_max_bandwidth / beta);
  plan.effect.bandwidth_factor = factor;
  return plan;
}

std::vector<CollectiveStep> custom_allreduce_schedule(const std::vector<int>& group, double bytes, bool one_shot) {
  const int n = static_cast<int>(group.size());
  if (n < 2) throw std::invalid_argument("a collective needs at least 2 ranks");
  std::vector<CollectiveStep> steps(one_shot ? 1 : 2);
  for (CollectiveStep& step : steps)
    for (int s = 1; s < n; ++s)
      for (int i = 0; i < n; ++i)
        step.push_back({group[static_cast<std::size_t>(i)], group[static_cast<std::size_t>((i + s) % n)],
                        one_shot ? bytes : bytes / n});
  return steps;
}

bool custom_allreduce_one_shot(int ranks, double bytes) {
  return ranks == 2 || (ranks <= 4 && bytes < 512 * 1024) || (ranks <= 8 && bytes < 256 * 1024);
}

double plan_time(const CollectivePlan& plan, CollectiveKind kind, int ranks, double bytes, double alpha, double beta,
                 double overhead, const ProtocolCosts& costs) {
  if (plan.custom) {
    const int steps = plan.one_shot ? 1 : 2;
    const double chunk = plan.one_shot ? (ranks - 1) * bytes : (ranks - 1) * bytes / ranks;
    return plan.fixed_latency + steps * (alpha + chunk / beta);
  }
  const auto [steps, chunk] = steps_and_chunk(kind, plan.schedule, ranks, bytes);
  return overhead + local_copy_time(kind, plan.schedule, ranks, bytes, costs) + plan.fixed_latency +
         steps * (alpha + plan.effect.extra_latency + chunk / (beta * plan.effect.bandwidth_factor));
}

CollectivePlan choose_plan(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes, double alpha,
                           double beta, HopKind hop, const ProtocolCosts& costs) {
  const CollectiveAlgorithm schedule = resolve_algorithm(kind, algorithm, ranks, bytes);
  if (kind == CollectiveKind::AllReduce && algorithm == CollectiveAlgorithm::Auto &&
      bytes < costs.custom_allreduce_max_bytes && ranks % 2 == 0 && ranks <= 8 &&
      (hop == HopKind::NVLink || (hop == HopKind::PCIe && ranks == 2))) {
    CollectivePlan plan;
    plan.custom = true;
    plan.one_shot = custom_allreduce_one_shot(ranks, bytes);
    // vLLM's kernels (csrc/custom_all_reduce.cuh): one-shot synchronises its ranks twice (before
    // reading the peers, after reducing), two-shot three times (and once between its halves):
    // half the latency per barrier.
    plan.fixed_latency = costs.custom_allreduce_latency * (plan.one_shot ? 1.0 : 1.5);
    return plan;
  }
  std::optional<CollectivePlan> best;
  double best_time = 0;
  auto consider = [&](bool nvls, CollectiveProtocol protocol) {
    const auto plan = make_plan(kind, schedule, nvls, protocol, ranks, alpha, beta, hop, costs);
    if (!plan) return;
    const double t = plan_time(*plan, kind, ranks, bytes, alpha, beta, 0, costs);
    if (!best || t < best_time) best = plan, best_time = t;
  };
  // Preferred first: a later candidate must be strictly faster.
  for (auto protocol : {CollectiveProtocol::Simple, CollectiveProtocol::LL128, CollectiveProtocol::LL})
    consider(false, protocol);
  if (algorithm == CollectiveAlgorithm::Auto) consider(true, CollectiveProtocol::Simple);
  return *best;  // ring/tree Simple always exists
}

double alpha_beta_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes, double alpha,
                       double beta, double overhead, const ProtocolCosts& costs, HopKind hop) {
  const CollectivePlan plan = choose_plan(kind, algorithm, ranks, bytes, alpha, beta, hop, costs);
  return plan_time(plan, kind, ranks, bytes, alpha, beta, overhead, costs);
}

std::string_view collective_kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::AllToAll: return "all_to_all";
    case CollectiveKind::SendRecv: return "send_recv";
  }
  return "?";
}

std::string_view algorithm_name(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::Auto: return "auto";
    case CollectiveAlgorithm::Ring: return "ring";
    case CollectiveAlgorithm::Tree: return "tree";
  }
  return "?";
}

std::string_view protocol_name(CollectiveProtocol protocol) {
  switch (protocol) {
    case CollectiveProtocol::LL: return "LL";
    case CollectiveProtocol::LL128: return "LL128";
    case CollectiveProtocol::Simple: return "Simple";
  }
  return "?";
}

std::string_view plan_name(const CollectivePlan& plan) {
  if (plan.custom) return plan.one_shot ? "custom/one-shot" : "custom/two-shot";
  static const char* names[3][3] = {{"ring/LL", "ring/LL128", "ring/Simple"},
                                    {"tree/LL", "tree/LL128", "tree/Simple"},
                                    {"nvls/LL", "nvls/LL128", "nvls/Simple"}};
  const int a = plan.nvls ? 2 : plan.schedule == CollectiveAlgorithm::Tree ? 1 : 0;
  return names[a][static_cast<int>(plan.protocol)];
}

std::optional<CollectiveKind> parse_collective_kind(std::string_view text) {
  std::string t;
  for (char c : text)
    if (c != '_' && c != '-') t += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (t == "allreduce") return CollectiveKind::AllReduce;
  if (t == "allgather") return CollectiveKind::AllGather;
  if (t == "reducescatter") return CollectiveKind::ReduceScatter;
  if (t == "alltoall") return CollectiveKind::AllToAll;
  if (t == "sendrecv" || t == "p2p") return CollectiveKind::SendRecv;
  return std::nullopt;
}

std::optional<CollectiveAlgorithm> parse_algorithm(std::string_view text) {
  if (text == "auto") return CollectiveAlgorithm::Auto;
  if (text == "ring") return CollectiveAlgorithm::Ring;
  if (text == "tree") return CollectiveAlgorithm::Tree;
  return std::nullopt;
}

}  // namespace ks::interconnect
