#pragma once
// The host-memory tier of the paged KV cache (as vLLM's CPU offloading connector, LMCache's
// local CPU backend and SGLang's HiCache host pool): block contents, named by the block hash of
// the prefix cache, that HBM evicted are kept in CPU memory, LRU-ordered, up to a capacity in
// blocks. A later prefix hit on them loads them back into HBM instead of recomputing them.
//
// Inclusive: a block loaded back keeps its host copy (LMCache keeps its CPU copy, HiCache's host
// pool keeps a loaded node's host value), so evicting it from HBM again costs no second copy.
// Pure data (no SystemC): the copies' time is the replica's business (serving/host_kv_link.hpp).
#include <cstdint>
#include <list>
#include <unordered_map>

namespace ks::serving {

struct HostKvStats {
  std::int64_t stored_blocks = 0;   // blocks copied GPU -> host (HBM evictions the host did not hold yet)
  std::int64_t loaded_blocks = 0;   // blocks copied host -> GPU (prefix hits in the host tier)
  std::int64_t evicted_blocks = 0;  // host blocks dropped for room (LRU)
  std::int64_t hit_tokens = 0;      // prefix-hit tokens served from the host tier
};

class HostKvTier {
 public:
  // capacity_blocks >= 1, else std::invalid_argument.
  explicit HostKvTier(std::int64_t capacity_blocks);

  bool contains(std::uint64_t hash) const { return index_.count(hash) != 0; }
  // A block evicted from HBM: becomes the most recently used host block, dropping the least
  // recently used one when the tier is full. True if it had to be copied (the host lacked it).
  bool store(std::uint64_t hash);
  // A host block loaded back into HBM (most recently used now); throws std::logic_error if absent.
  void load(std::uint64_t hash, std::int64_t block_size);

  std::int64_t capacity_blocks() const { return capacity_; }
  std::int64_t size() const { return static_cast<std::int64_t>(lru_.size()); }
  // The hash evicted next (the least recently used); 0 when empty. For tests.
  std::uint64_t lru() const { return lru_.empty() ? 0 : lru_.front(); }
  const HostKvStats& stats() const { return stats_; }

 private:
  void touch(std::list<std::uint64_t>::iterator it) { lru_.splice(lru_.end(), lru_, it); }

  std::int64_t capacity_;
  std::list<std::uint64_t> lru_;  // front: evicted first
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> index_;
  HostKvStats stats_;
};

}  // namespace ks::serving
