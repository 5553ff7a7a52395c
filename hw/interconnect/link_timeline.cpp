#include "hw/interconnect/link_timeline.hpp"

#include <algorithm>

namespace ks::interconnect {

double LinkTimeline::earliest_fit(double ready, double seconds) const {
  if (busy_.empty() || ready >= busy_.back().end) return ready;  // after everything reserved
  // The first reservation starting after `ready`; the one before may still be running then.
  auto it = std::upper_bound(busy_.begin(), busy_.end(), ready,
                             [](double t, const Busy& b) { return t < b.start; });
  double t = ready;
  if (it != busy_.begin()) t = std::max(t, std::prev(it)->end);
  for (; it != busy_.end() && it->start < t + seconds; ++it) t = std::max(t, it->end);
  return t;
}

void LinkTimeline::occupy(double start, double seconds, double bytes) {
  busy_s_ += seconds;
  bytes_ += bytes;
  ++transfers_;
  const double end = start + seconds;
  if (busy_.empty() || start > busy_.back().end) {
    busy_.push_back({start, end});
    return;
  }
  if (start >= busy_.back().start) {  // touches the last one
    busy_.back().end = std::max(busy_.back().end, end);
    return;
  }
  // Into a gap: merge with the neighbours it touches.
  auto it = std::upper_bound(busy_.begin(), busy_.end(), start, [](double t, const Busy& b) { return t < b.start; });
  Busy b{start, end};
  if (it != busy_.begin() && std::prev(it)->end >= start) {
    --it;
    b.start = it->start;
    b.end = std::max(b.end, it->end);
    it = busy_.erase(it);
  }
  while (it != busy_.end() && it->start <= b.end) {
    b.end = std::max(b.end, it->end);
    it = busy_.erase(it);
  }
  busy_.insert(it, b);
}

void LinkTimeline::forget_before(double t) {
  while (!busy_.empty() && busy_.front().end <= t) busy_.pop_front();
}

}  // namespace ks::interconnect
