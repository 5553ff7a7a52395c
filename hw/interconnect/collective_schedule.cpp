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

ProtocolEffect protocol_effect(CollectiveProtocol protocol, const ProtocolCosts& costs) {
  if (protocol == CollectiveProtocol::LowLatency) return {0.0, costs.ll_bandwidth_fraction};
  return {costs.simple_step_latency, 1.0};
}

double local_copy_bytes(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes) {
  return kind == CollectiveKind::SendRecv ? 0.0 : steps_and_chunk(kind, algorithm, ranks, bytes).second;
}

double local_copy_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes,
                       const ProtocolCosts& costs) {
  if (costs.local_copy_bandwidth <= 0) return 0.0;
  return local_copy_bytes(kind, algorithm, ranks, bytes) / costs.local_copy_bandwidth;
}

double alpha_beta_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes, double alpha,
                       double beta, double overhead, CollectiveProtocol protocol, const ProtocolCosts& costs) {
  const auto [steps, chunk] = steps_and_chunk(kind, algorithm, ranks, bytes);
  const ProtocolEffect e = protocol_effect(protocol, costs);
  return overhead + local_copy_time(kind, algorithm, ranks, bytes, costs) +
         steps * (alpha + e.extra_latency + chunk / (beta * e.bandwidth_factor));
}

CollectiveProtocol choose_protocol(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes,
                                   double alpha, double beta, const ProtocolCosts& costs) {
  const double ll = alpha_beta_time(kind, algorithm, ranks, bytes, alpha, beta, 0, CollectiveProtocol::LowLatency, costs);
  const double simple = alpha_beta_time(kind, algorithm, ranks, bytes, alpha, beta, 0, CollectiveProtocol::Simple, costs);
  return ll < simple ? CollectiveProtocol::LowLatency : CollectiveProtocol::Simple;
}

double alpha_beta_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes, double alpha,
                       double beta, double overhead, const ProtocolCosts& costs) {
  return alpha_beta_time(kind, algorithm, ranks, bytes, alpha, beta, overhead,
                         choose_protocol(kind, algorithm, ranks, bytes, alpha, beta, costs), costs);
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
  return protocol == CollectiveProtocol::LowLatency ? "LL" : "Simple";
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
