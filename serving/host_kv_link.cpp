#include "serving/host_kv_link.hpp"

#include <stdexcept>
#include <string>

namespace ks::serving {

HostKvLink::HostKvLink(sim::Environment& env, double bandwidth, double latency_s)
    : env_(env), bandwidth_(bandwidth), latency_s_(latency_s), h2d_(env, 1), d2h_(env, 1) {
  if (!(bandwidth > 0)) throw std::invalid_argument("host KV link bandwidth must be positive, got " + std::to_string(bandwidth));
  if (!(latency_s >= 0)) throw std::invalid_argument("host KV link latency must be >= 0, got " + std::to_string(latency_s));
}

void HostKvLink::load(double bytes) {
  const double s = copy_seconds(bytes);
  ++stats_.loads;
  stats_.load_bytes += bytes;
  stats_.load_seconds += s;
  sim::Request slot = h2d_.acquire();
  env_.hold(sim::seconds(s));
}

void HostKvLink::store(double bytes) {
  const double s = copy_seconds(bytes);
  ++stats_.stores;
  stats_.store_bytes += bytes;
  stats_.store_seconds += s;
  env_.process([this, s] {
    sim::Request slot = d2h_.acquire();
    env_.hold(sim::seconds(s));
  }, "host_kv_store");
}

}  // namespace ks::serving
