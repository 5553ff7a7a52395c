#pragma once
// Prefill/decode disaggregation (as vLLM's disaggregated prefill with the NixlConnector, SGLang's
// PD mode, NVIDIA Dynamo and DistServe / Splitwise run it): two pools of replicas. A request goes
// first to a prefill replica (the prefill pool's router picks it), which computes its prompt and
// its first token only (max_tokens = 1, as the engines' proxies send it); then the decode pool's
// router picks a decode replica, which must have room before it accepts the request
// (back-pressure): max_num_seqs requests and the KV blocks of prompt + 1 tokens. Once they are
// reserved, the request's KV shards move rank to rank from the prefill GPUs to the decode GPUs
// through a proto::KvTransferChannel (MemCopys on the modelled links). When the last byte has
// arrived, the first token is streamed to the client (SGLang and Dynamo stream it from the decode
// side once the KV is there, so TTFT = queueing + prefill + back-pressure wait + transfer) and the
// request joins the decode replica's running batch with its KV in place.
//
// The coordinator is data plus callbacks (the replicas' on_finish hooks) and one delivery
// process; it never holds a thread per request.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kernels/dtype.hpp"
#include "kernels/model_config.hpp"
#include "proto/kv_transfer.hpp"
#include "sc_modules/sim/sim.hpp"
#include "serving/kv_cache.hpp"
#include "serving/metrics_recorder.hpp"
#include "serving/pd_transfer_plan.hpp"
#include "serving/replica.hpp"
#include "serving/router.hpp"

namespace ks::serving {

enum class KvTransferMode { Whole, Layerwise };

// One replica of a pool: the engine, its KV manager (owned by the replica) and its GPUs' global
// ids in TP rank order.
struct PdMember {
  Replica* replica = nullptr;
  KvBlockManager* kv = nullptr;
  std::vector<int> devices;
};

struct PdSettings {
  kernels::ModelConfig model;
  kernels::DType kv_dtype = kernels::DType::BF16;
  int prefill_tp = 1;
  int decode_tp = 1;
  KvTransferMode mode = KvTransferMode::Whole;
  std::int64_t decode_max_num_seqs = 256;
};

struct PdTransferStats {
  std::uint64_t transfers = 0;       // requests whose KV moved
  std::uint64_t copies = 0;          // rank-to-rank copies
  double bytes = 0;                  // KV bytes moved (streamed ones included)
  double sent_bytes = 0;             // of which on the links after the prefill ended
  std::vector<double> transfer_s;    // per transfer: start of the copies -> last byte in
  std::vector<double> exposed_s;     // per transfer: end of the prefill -> last byte in (waits included)
  std::vector<double> wait_s;        // per transfer: end of the prefill -> decode room reserved
  std::uint64_t waited = 0;          // transfers that waited for decode room
};

class PdCoordinator {
 public:
  PdCoordinator(sim::Environment& env, PdSettings settings, std::vector<PdMember> prefill, std::vector<PdMember> decode,
                std::unique_ptr<Router> prefill_router, std::unique_ptr<Router> decode_router,
                proto::KvTransferChannel& channel, MetricsRecorder& metrics);

  // A new request from the source (it stays owned by the caller until the run ends).
  void submit(Request* request);
  // Called for every request that finishes (its last token out).
  void set_on_finish(std::function<void(Request&)> callback) { on_finish_ = std::move(callback); }

  const std::vector<PdMember>& prefill() const { return prefill_; }
  const std::vector<PdMember>& decode() const { return decode_; }
  const PdTransferStats& stats() const { return stats_; }
  const std::vector<KvRankShare>& shares() const { return shares_; }
  // Requests whose prefill is done and whose KV waits for decode room, now.
  std::size_t waiting_for_decode() const;

 private:
  struct Pending {
    Request* request;
    double prefill_end_s;
    double window_s;  // the prefill's run, for layer-wise streaming
    std::size_t prefill;
  };
  struct Delivery {
    Request* request;
    std::size_t decode;
  };

  void prefill_done(Request& shadow);
  void try_admit(std::size_t decode);
  void start_transfer(const Pending& p, std::size_t decode);
  void deliver_loop();

  sim::Environment& env_;
  PdSettings settings_;
  std::vector<PdMember> prefill_, decode_;
  std::unique_ptr<Router> prefill_router_, decode_router_;
  proto::KvTransferChannel& channel_;
  MetricsRecorder& metrics_;
  std::vector<KvRankShare> shares_;
  std::deque<Request> shadows_;                              // the prefill side's copy of each request
  std::unordered_map<std::uint64_t, Request*> real_;         // request id -> the source's request
  std::vector<std::deque<Pending>> pending_;                 // per decode replica, FIFO
  std::vector<std::size_t> in_transfer_;                     // per decode replica
  std::vector<std::int64_t> held_blocks_;                    // per decode replica: blocks of requests in transfer
  std::vector<std::int64_t> max_need_;                       // per decode replica: most blocks a routed request needs
  sim::Store<Delivery> deliveries_;
  std::function<void(Request&)> on_finish_;
  PdTransferStats stats_;
};

}  // namespace ks::serving
