#pragma once
// Collective kinds and algorithms, shared by the TLM extension and the pure interconnect model
// (so the latter needs no SystemC header).
namespace ks::proto {

enum class CollectiveKind { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };
enum class CollectiveAlgorithm { Auto, Ring, Tree };

}  // namespace ks::proto
