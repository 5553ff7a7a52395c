#pragma once
// One direction of a link as a FIFO timeline: a link carries one transfer at a time at its full
// bandwidth, so transfers that overlap in time queue behind each other (two equal transfers
// issued together take twice as long as one). Pure C++.
#include <cstdint>

namespace ks::interconnect {

class LinkTimeline {
 public:
  // When the link can start its next transfer (s).
  double free_at() const { return free_at_; }
  // Occupies the link from `start` (>= free_at()) for `seconds`; records statistics.
  void occupy(double start, double seconds, double bytes);

  double busy_seconds() const { return busy_s_; }
  double bytes() const { return bytes_; }
  std::uint64_t transfers() const { return transfers_; }

 private:
  double free_at_ = 0;
  double busy_s_ = 0;
  double bytes_ = 0;
  std::uint64_t transfers_ = 0;
};

}  // namespace ks::interconnect
