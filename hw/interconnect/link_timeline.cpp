#include "hw/interconnect/link_timeline.hpp"

#include <algorithm>

namespace ks::interconnect {

void LinkTimeline::occupy(double start, double seconds, double bytes) {
  free_at_ = std::max(free_at_, start + seconds);
  busy_s_ += seconds;
  bytes_ += bytes;
  ++transfers_;
}

}  // namespace ks::interconnect
