#pragma once
// One direction of a link as a timeline of reservations: a link carries one transfer at a time
// at its full bandwidth, so transfers that overlap in time queue behind each other (two equal
// transfers issued together take twice as long as one). A transfer takes the earliest free
// interval at or after its ready time, also a gap between reservations made earlier for later
// times (a loosely-timed host reserves a whole step's collectives ahead; a transfer issued
// meanwhile for an earlier time must not wait for all of them). Pure C++.
#include <cstdint>
#include <deque>

namespace ks::interconnect {

class LinkTimeline {
 public:
  // End of the latest reservation (s).
  double free_at() const { return busy_.empty() ? 0.0 : busy_.back().end; }
  // The earliest start >= `ready` at which the link is free for `seconds`.
  double earliest_fit(double ready, double seconds) const;
  // Reserves [start, start + seconds) (free: see earliest_fit); records statistics.
  void occupy(double start, double seconds, double bytes);
  // Drops reservations that end at or before `t`: no later transfer can be ready before then.
  void forget_before(double t);

  double busy_seconds() const { return busy_s_; }
  double bytes() const { return bytes_; }
  std::uint64_t transfers() const { return transfers_; }

 private:
  struct Busy {
    double start, end;
  };
  // Disjoint, by start; touching reservations merged. Most reservations go at the end (a comm
  // stream's transfers come in time order), so a deque appends and drops in O(1).
  std::deque<Busy> busy_;
  double busy_s_ = 0;
  double bytes_ = 0;
  std::uint64_t transfers_ = 0;
};

}  // namespace ks::interconnect
