#include "serving/host_kv_tier.hpp"

#include <stdexcept>
#include <string>

namespace ks::serving {

HostKvTier::HostKvTier(std::int64_t capacity_blocks) : capacity_(capacity_blocks) {
  if (capacity_blocks < 1)
    throw std::invalid_argument("host KV tier needs room for at least one block, got " + std::to_string(capacity_blocks));
}

bool HostKvTier::store(std::uint64_t hash) {
  const auto it = index_.find(hash);
  if (it != index_.end()) {
    touch(it->second);
    return false;
  }
  if (size() >= capacity_) {
    index_.erase(lru_.front());
    lru_.pop_front();
    ++stats_.evicted_blocks;
  }
  lru_.push_back(hash);
  index_.emplace(hash, std::prev(lru_.end()));
  ++stats_.stored_blocks;
  return true;
}

void HostKvTier::load(std::uint64_t hash, std::int64_t block_size) {
  const auto it = index_.find(hash);
  if (it == index_.end()) throw std::logic_error("host KV tier: load of a block it does not hold");
  touch(it->second);
  ++stats_.loaded_blocks;
  stats_.hit_tokens += block_size;
}

}  // namespace ks::serving
