#pragma once
// The request source: a serving process of its own ("request_source") that draws requests from
// the workload and hands each to a replica, as a benchmark client in front of the engines would.
// It applies the context-length rule (vLLM's OpenAI server rejects prompt + max_tokens beyond
// max_model_len: a trace's requests are rejected and counted, a generated workload's are a
// scenario error), checks that each request fits a replica (its KV cache, and one step without
// chunked prefill; else a workload error with the numbers), and routes it over the replicas'
// outstanding counts, or, with prefill/decode disaggregation, hands it to the coordinator.
// Closed-loop workloads (max_concurrency) send the next request when one finishes (finished()).
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/config/error.hpp"
#include "sc_modules/sim/sim.hpp"
#include "serving/replica.hpp"
#include "serving/request.hpp"
#include "serving/router.hpp"
#include "serving/workload.hpp"

namespace ks::serving {

struct RequestSourceSettings {
  std::int64_t max_model_len = std::numeric_limits<std::int64_t>::max();  // context length
  bool max_model_len_given = false;   // engine.max_model_len set (named in errors)
  bool reject_long_requests = false;  // trace workloads: reject and count; others: an error
  config::SourceMark workload_mark;   // where workload errors point
  std::string kv_sizing_key = "cache.gpu_memory_utilization";  // the key that sized the KV cache
};

class RequestSource {
 public:
  // `submit` empty: each request goes to the replica `router` picks. Else every request goes to
  // `submit` (disaggregation's coordinator), checked against replicas.back() (a decode replica
  // holds it whole).
  RequestSource(sim::Environment& env, Workload& workload, RequestSourceSettings settings,
                std::vector<Replica*> replicas, Router* router, std::function<void(Request*)> submit = {});

  // A request finished: a closed-loop workload may send the next.
  void finished();
  // Every request submitted, in arrival order (unfinished ones have finish_s < 0).
  const std::deque<Request>& requests() const { return requests_; }
  std::int64_t submitted() const { return submitted_; }
  std::int64_t context_rejected() const { return context_rejected_; }

 private:
  void loop();

  sim::Environment& env_;
  Workload& workload_;
  RequestSourceSettings settings_;
  std::vector<Replica*> replicas_;
  Router* router_;
  std::function<void(Request*)> submit_;
  // Closed loop: the client's free slots (max_concurrency); a request takes one, finishing returns it.
  std::unique_ptr<sim::Container> free_slots_;
  std::deque<Request> requests_;
  std::int64_t submitted_ = 0;
  std::int64_t context_rejected_ = 0;
};

}  // namespace ks::serving
