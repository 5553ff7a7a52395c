#pragma once
// Collects what the vllm-bench metrics need as requests progress.
#include <vector>

#include "serving/batch_scheduler.hpp"
#include "serving/metrics.hpp"

namespace ks::serving {

class MetricsRecorder {
 public:
  void record(const StepOutcome& outcome, double now_s) {
    // Equal gaps are counted here and added as one run: the same runs as adding each gap, without
    // a read-modify-write of the last run per token.
    double gap = 0;
    std::uint64_t count = 0;
    for (const EmittedToken& t : outcome.emitted) {
      if (t.previous_token_s < 0) continue;
      const double g = now_s - t.previous_token_s;
      if (count > 0 && g == gap) {
        ++count;
        continue;
      }
      itls_.add(gap, count);  // count 0: nothing
      gap = g;
      count = 1;
    }
    itls_.add(gap, count);
    for (const Request* r : outcome.finished)
      requests_.push_back({r->id, r->arrival_s, r->first_token_s, r->finish_s, r->prompt_tokens, r->generated});
    if (!outcome.finished.empty()) last_finish_s_ = now_s;
  }

  const std::vector<RequestRecord>& requests() const { return requests_; }
  const LatencySamples& itls() const { return itls_; }
  double last_finish_s() const { return last_finish_s_; }

 private:
  std::vector<RequestRecord> requests_;
  LatencySamples itls_;  // runs of equal gaps: one per step, not one per token
  double last_finish_s_ = 0;
};

}  // namespace ks::serving
