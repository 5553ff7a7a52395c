#pragma once
// Collectives as the point-to-point transfers they decompose into, step by step (NCCL-style
// algorithms), and the α–β closed form of the same algorithms. Pure C++.
//
// Sizes follow nccl-tests: `bytes` is the buffer per rank (all-reduce: the reduced tensor;
// all-gather: the gathered output; reduce-scatter: the input; all-to-all: the send buffer;
// send/recv: the message).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sc_modules/tlm/collective_types.hpp"

namespace ks::interconnect {

using proto::CollectiveAlgorithm;
using proto::CollectiveKind;

struct Transfer {
  int src;  // global GPU ids
  int dst;
  double bytes;
};

// One step: transfers that may run concurrently. A rank's transfer in step s starts once every
// transfer into that rank in earlier steps has arrived (it forwards or reduces what it received).
using CollectiveStep = std::vector<Transfer>;

// Auto picks ring (the link parameters are fitted for ring; tree only when asked for).
CollectiveAlgorithm resolve_algorithm(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks,
                                      double bytes);

// The steps of a collective over `group` (global GPU ids, in ring order). Ring all-reduce:
// 2(n-1) steps of bytes/n; ring all-gather/reduce-scatter: n-1 steps of bytes/n; tree all-reduce:
// binomial-tree reduce then broadcast, 2*ceil(log2 n) steps of bytes; all-to-all: n-1 steps,
// rank i sends bytes/n to rank i+s; send/recv: group[0] -> group[1]. Throws std::invalid_argument
// for groups smaller than 2 (send/recv: exactly 2), duplicate ranks or tree for non-all-reduce.
std::vector<CollectiveStep> collective_schedule(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                                const std::vector<int>& group, double bytes);

// α–β model of the same algorithm on a uniform fabric: overhead + steps * (alpha + chunk / beta),
// alpha = per-transfer latency, beta = per-direction bandwidth of a rank's path.
double alpha_beta_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes,
                       double alpha, double beta, double overhead);

std::string_view collective_kind_name(CollectiveKind kind);
std::string_view algorithm_name(CollectiveAlgorithm algorithm);
// Accepts all_reduce/all-reduce/allreduce, all_gather, reduce_scatter, all_to_all, send_recv.
std::optional<CollectiveKind> parse_collective_kind(std::string_view text);
std::optional<CollectiveAlgorithm> parse_algorithm(std::string_view text);

}  // namespace ks::interconnect
