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

// NCCL's algorithms and protocols, priced as NCCL's own tuner prices them (NVIDIA/nccl commit
// 5067397c, src/graph/tuning.cc, ncclTopoTuneModel / ncclTopoGetAlgoTime): a fixed base latency
// per (algorithm, protocol), a latency per step that depends on the link type the algorithm
// crosses (NVLink, PCIe, network), and a bus bandwidth that each protocol derates (LL: half the
// link's, capped per architecture; LL128: 0.92; Simple: full). NCCL runs the (algorithm,
// protocol) its model predicts fastest for the size; so do we. The scale of those latencies and
// the link bandwidth are fitted per system (docs/validation-collectives.md).
//
// LL:     8-byte stores of 4 data + 4 flag bytes, no fence: lowest latency, half the bandwidth.
// LL128:  128-byte lines with 8 flag bytes: 120/128 of the bandwidth; NVLink paths only.
// Simple: bulk copies with a fence and handshake per step: full bandwidth, highest latency.
enum class CollectiveProtocol { LL, LL128, Simple };

// The kind of hop NCCL's latency table is indexed by (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET).
enum class HopKind { NVLink, PCIe, Network };

// What NCCL's kernel costs beyond the links. The defaults are the plain α–β form (no NCCL latency,
// no NVLS, a free local copy); topology presets carry fitted values.
//
// The local copy: a rank's own chunk also passes through the collective kernel (all-gather copies
// it into the output, reduce-scatter and all-reduce reduce into it, all-to-all copies the chunk a
// rank keeps), once per collective and at the kernel's copy rate, not the link's. It is why a
// ring's bus bandwidth grows with the rank count (the own chunk, bytes/n, weighs less): B200
// all-gather at 2 GiB moves 442, 568 and 616 GB/s of bus bandwidth on 2, 4 and 8 GPUs.
struct ProtocolCosts {
  // Multiplies NCCL's base and per-step latencies (tuning.cc baseLatencies, hwLatencies); 0 prices
  // no protocol latency at all (then Simple, at full bandwidth, always wins).
  double latency_scale = 0.0;
  // Cap on LL's bus bandwidth in B/s (tuning.cc llMaxBws, one node: Ampere 87.7, Hopper 141,
  // Blackwell 282 GB/s); 0: no cap.
  double ll_max_bandwidth = 0.0;
  // NVLS (NVLink SHARP: the NVSwitch reduces and multicasts) for all-reduce inside one node:
  // bus bandwidth = 2 x nvls_efficiency x link bandwidth (tuning.cc: "AllReduce pipelines two
  // operations", nvlsEfficiency Hopper 0.85, Blackwell 0.74). 0: the fabric has no NVLS.
  double nvls_efficiency = 0.0;
  // s, NVLS's fixed latency per all-reduce, fitted where measured: 8-GPU all-reduces on H100, H200
  // and B200 reach NVLS's bandwidth only from ~16 MiB on, after 53-56 us of fixed cost, not NCCL's
  // tuner figure of 25 us (below that size a ring is faster). 0: NCCL's (25 us x latency_scale).
  double nvls_latency = 0.0;
  double local_copy_bandwidth = 0.0;  // B/s at which a rank's own chunk is copied (0: free)
  // The serving engine's own all-reduce (vLLM's / SGLang's custom all-reduce: every rank reads its
  // peers' buffers over NVLink peer-to-peer, one kernel, no NCCL): all-reduces smaller than this
  // run it instead of NCCL (0: never; vLLM's default max_size is 8 MiB). Only where the engine
  // runs it: every pair of ranks on NVLink, or two GPUs on PCIe.
  double custom_allreduce_max_bytes = 0.0;
  // s, its one-shot fixed cost (launch, its two barriers); two-shot has a third barrier: 1.5x.
  double custom_allreduce_latency = 0.0;
};

// What a plan does to each transfer of its schedule: latency added, factor on the link bandwidth.
struct ProtocolEffect {
  double extra_latency;
  double bandwidth_factor;
};

// An (algorithm, protocol) as the fabric runs it. NVLS has no point-to-point decomposition of its
// own (the switch reduces): it runs on the ring's transfers with the bandwidth factor that gives
// the ring NVLS's time, so it still holds (and contends for) every GPU's NVLink.
struct CollectivePlan {
  CollectiveAlgorithm schedule = CollectiveAlgorithm::Ring;  // the transfers: ring or tree
  bool nvls = false;
  // The engine's custom all-reduce (custom_allreduce_schedule): one-shot (every rank reads every
  // peer's whole buffer) or two-shot (reduce-scatter then all-gather through peer reads).
  bool custom = false;
  bool one_shot = false;
  CollectiveProtocol protocol = CollectiveProtocol::Simple;
  double fixed_latency = 0;  // s, once per collective (NCCL's base latency; NVLS: all of it)
  ProtocolEffect effect{0.0, 1.0};
};

// The custom all-reduce's transfers: one-shot, one step in which every rank sends its whole buffer
// to every peer; two-shot, two steps of bytes/n to every peer. Within a step the transfers are
// listed by peer offset (all ranks to rank+1 first, then rank+2, ...), so on a switch each link
// carries its n-1 transfers back to back.
std::vector<CollectiveStep> custom_allreduce_schedule(const std::vector<int>& group, double bytes, bool one_shot);
// vLLM's choice (csrc/custom_all_reduce.cuh, CustomAllreduce::allreduce): one-shot on 2 GPUs, on
// up to 4 below 512 KiB and on up to 8 below 256 KiB; two-shot otherwise.
bool custom_allreduce_one_shot(int ranks, double bytes);

// Bytes of a rank's own chunk the kernel copies locally (0 for send/recv) and the time that takes.
double local_copy_bytes(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes);
double local_copy_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes,
                       const ProtocolCosts& costs);

// The plan for one (algorithm, protocol) on a uniform fabric whose routes have latency `alpha` and
// bandwidth `beta`: per step, the larger of the link latency and NCCL's latency for the hop kind
// (extra_latency = max(0, scale * hwLatency - alpha)); the protocol's bandwidth factor. nullopt
// where NCCL does not run that combination (LL128 off NVLink, NVLS off NVSwitch or for other
// kinds, tree for other kinds than all-reduce).
std::optional<CollectivePlan> make_plan(CollectiveKind kind, CollectiveAlgorithm schedule, bool nvls,
                                        CollectiveProtocol protocol, int ranks, double alpha, double beta,
                                        HopKind hop, const ProtocolCosts& costs);
// α–β time of a plan: overhead + local copy + fixed latency
//   + steps * (alpha + extra latency + chunk / (beta * bandwidth factor)).
// Custom all-reduce: custom latency + steps * (alpha + chunk / beta), one-shot 1 step of
// (n-1) bytes, two-shot 2 steps of (n-1)/n bytes (no NCCL overhead, no local copy).
double plan_time(const CollectivePlan& plan, CollectiveKind kind, int ranks, double bytes, double alpha, double beta,
                 double overhead, const ProtocolCosts& costs);
// NCCL's choice: the fastest plan (ties: Simple over LL128 over LL, ring over NVLS). `algorithm`
// Auto considers ring x {LL, LL128, Simple} and, for all-reduce on an NVLS fabric, NVLS; Ring or
// Tree restrict the choice to that algorithm's protocols. Before NCCL, the engine: an Auto
// all-reduce below custom_allreduce_max_bytes on 2, 4, 6 or 8 ranks runs the custom all-reduce
// (the engine does not compare it with NCCL). Send/recv and all-to-all run NCCL's
// point-to-point path: their protocol is chosen alike over the same schedule.
CollectivePlan choose_plan(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes, double alpha,
                           double beta, HopKind hop, const ProtocolCosts& costs);
// α–β time under the chosen plan (hop NVLink unless given).
double alpha_beta_time(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes, double alpha,
                       double beta, double overhead, const ProtocolCosts& costs = {}, HopKind hop = HopKind::NVLink);
// Steps of the algorithm and bytes each rank sends per step (the α–β form's features).
std::pair<int, double> steps_and_chunk(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks, double bytes);

std::string_view collective_kind_name(CollectiveKind kind);
std::string_view algorithm_name(CollectiveAlgorithm algorithm);
std::string_view protocol_name(CollectiveProtocol protocol);  // "LL", "LL128", "Simple"
std::string_view plan_name(const CollectivePlan& plan);         // "ring/LL128", "nvls/Simple"
// Accepts all_reduce/all-reduce/allreduce, all_gather, reduce_scatter, all_to_all, send_recv.
std::optional<CollectiveKind> parse_collective_kind(std::string_view text);
std::optional<CollectiveAlgorithm> parse_algorithm(std::string_view text);

}  // namespace ks::interconnect
