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
#include <utility>
#include <vector>

#include "proto/collective_types.hpp"

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

// NCCL's protocols in two regimes. Low latency (LL/LL128: a flag travels with the data, no
// synchronisation per chunk) moves data at a fraction of the link bandwidth; Simple moves it at
// full bandwidth but pays a memory fence and a handshake per step. NCCL picks the protocol its
// own cost model finds faster for the message size, so small messages see LL's latency and large
// ones Simple's bandwidth: a time that is concave in the size, which one α–β line cannot follow.
enum class CollectiveProtocol { LowLatency, Simple };

// What NCCL's kernel costs beyond the links. All default to "no difference" (the plain α–β
// form); topology presets carry fitted values.
//
// The local copy: a rank's own chunk also passes through the collective kernel (all-gather copies
// it into the output, reduce-scatter and all-reduce reduce into it, all-to-all copies the chunk a
// rank keeps), once per collective and at the kernel's copy rate, not the link's. It is why a
// ring's bus bandwidth grows with the rank count (the own chunk, bytes/n, weighs less): B200
// all-gather at 2 GiB moves 442, 568 and 616 GB/s of bus bandwidth on 2, 4 and 8 GPUs.
struct ProtocolCosts {
  double ll_bandwidth_fraction = 1.0;  // LL bandwidth / link bandwidth, in (0, 1]
  double simple_step_latency = 0.0;    // s added to every step (transfer) under Simple
  double local_copy_bandwidth = 0.0;   // B/s at which a rank's own chunk is copied (0: free)
};

// What a protocol does to one transfer: latency added, factor on the link bandwidth.
struct ProtocolEffect {
  double extra_latency;
  double bandwidth_factor;
};
ProtocolEffect protocol_effect(CollectiveProtocol protocol, const ProtocolCosts& costs);

// Bytes of a rank's own chunk the kernel copies locally (0 for send/recv) and the time that takes.
double local_copy_bytes(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes);
double local_copy_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes,
                       const ProtocolCosts& costs);

// α–β model of the same algorithm on a uniform fabric under one protocol:
// overhead + local copy + steps * (alpha + extra latency + chunk / (beta * bandwidth factor)),
// alpha = per-transfer latency, beta = per-direction bandwidth of a rank's path.
double alpha_beta_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes, double alpha,
                       double beta, double overhead, CollectiveProtocol protocol, const ProtocolCosts& costs);
// The protocol with the lower alpha_beta_time (Simple on a tie), as NCCL's tuner chooses.
CollectiveProtocol choose_protocol(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes,
                                   double alpha, double beta, const ProtocolCosts& costs);
// alpha_beta_time under the chosen protocol.
double alpha_beta_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes, double alpha,
                       double beta, double overhead, const ProtocolCosts& costs = {});
// Steps of the algorithm and bytes each rank sends per step (the α–β form's features).
std::pair<int, double> steps_and_chunk(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes);

std::string_view collective_kind_name(CollectiveKind kind);
std::string_view algorithm_name(CollectiveAlgorithm algorithm);
std::string_view protocol_name(CollectiveProtocol protocol);  // "LL", "Simple"
// Accepts all_reduce/all-reduce/allreduce, all_gather, reduce_scatter, all_to_all, send_recv.
std::optional<CollectiveKind> parse_collective_kind(std::string_view text);
std::optional<CollectiveAlgorithm> parse_algorithm(std::string_view text);

}  // namespace ks::interconnect
