#pragma once
// Paged KV cache with prefix caching, as vLLM v1's KV cache manager: a request holds a table of
// fixed-size blocks; every full block is identified by a hash chain of its tokens (the hash of
// a block covers all tokens before it), so two requests with the same prefix map it to the same
// blocks. Blocks are reference counted; a block nobody holds stays in the cache, in a free queue
// ordered for LRU eviction, until a new allocation needs it.
//
// Blocks whose tokens belong to one request alone (no shared prefix group, no shared token ids
// up to them) can only ever be hit by that same request after a preemption. They take their LRU
// place in the free queue like any cached block, but enter the hash map only when their request
// is preempted: a finished request's private blocks are dead content, and skipping the map for
// them (most blocks of most workloads) saves a hash, an insert and an erase per block without
// changing a single eviction or hit.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <tsl/robin_map.h>

#include "serving/host_kv_tier.hpp"
#include "serving/request.hpp"

namespace ks::serving {

struct PrefixCacheStats {
  std::int64_t query_tokens = 0;  // tokens of the sequences looked up at admission
  std::int64_t hit_tokens = 0;    // of which found in the cache
  std::int64_t evictions = 0;     // cached blocks reused for other content
  // hit_tokens includes the host tier's hits (HostKvStats::hit_tokens): tokens not recomputed.
  double hit_rate() const { return query_tokens > 0 ? static_cast<double>(hit_tokens) / query_tokens : 0.0; }
};

// Hash of block `index` of the request's token sequence given the hash of the block before it.
std::uint64_t block_hash(const Request& request, std::int64_t index, std::int64_t block_size,
                         std::uint64_t parent);

class KvBlockManager {
 public:
  KvBlockManager(std::int64_t num_blocks, std::int64_t block_size, bool prefix_caching = false);

  // Adds a host-memory tier of `capacity_blocks` blocks (prefix caching only, else
  // std::invalid_argument): a cached block HBM evicts is stored there (HostKvTier::store), and
  // cached_prefix / allocate also hit blocks the host holds, which allocate loads back into
  // fresh HBM blocks. The copies to make are counted for the engine (take_host_loads/stores).
  void enable_host_tier(std::int64_t capacity_blocks);
  const HostKvTier* host_tier() const { return host_.get(); }
  // Blocks to copy host -> GPU / GPU -> host since the last call (zeroes the count).
  std::int64_t take_host_loads() { return std::exchange(host_loads_, 0); }
  std::int64_t take_host_stores() { return std::exchange(host_stores_, 0); }

  std::int64_t blocks_for(std::int64_t tokens) const { return (tokens + block_size_ - 1) / block_size_; }

  // Tokens at the start of the sequence of a request holding no blocks whose KV the cache
  // already has (whole blocks; at most sequence_length - 1, since the last token must be
  // computed to sample). No state change.
  std::int64_t cached_prefix(Request& request);
  // Gives a request holding no blocks the first `hit_tokens / block_size` cached blocks of its
  // prefix and new blocks up to `tokens`; false (and no change) if the pool is short.
  bool allocate(Request& request, std::int64_t hit_tokens, std::int64_t tokens);
  // Grows the request's allocation to hold `tokens` tokens; false (and no change) if the pool is short.
  // Inline: called for every scheduled request every step, and a new block is needed once per
  // block_size tokens.
  bool reserve(Request& request, std::int64_t tokens) {
    const auto held = static_cast<std::int64_t>(request.block_table.size());
    // blocks_for(tokens) <= held, by a multiplication: a division per sequence per step stalled.
    return tokens <= held * block_size_ || grow(request, blocks_for(tokens) - held);
  }
  // Registers the request's newly completed full blocks in the prefix cache (inline like reserve).
  void commit(Request& request) {
    if (prefix_caching_ && request.computed_tokens >= (request.kv_committed_blocks + 1) * block_size_)
      commit_full_blocks(request);
  }
  // Drops the request's references; its cached blocks stay reusable until evicted.
  void release(Request& request);
  // Frees the request's blocks beyond those `tokens` tokens need (speculative decoding: the
  // rejected drafts' KV); their content is dropped (tail first, like release).
  void shrink(Request& request, std::int64_t tokens);

  std::int64_t num_blocks() const { return static_cast<std::int64_t>(ref_.size()); }
  // Blocks no request holds (cached or empty): what allocations can take.
  std::int64_t free_blocks() const { return free_count_; }
  std::int64_t block_size() const { return block_size_; }
  std::int64_t ref_count(std::int32_t block) const { return ref_.at(static_cast<std::size_t>(block)); }
  std::int64_t cached_blocks() const { return static_cast<std::int64_t>(cached_.size()) + private_blocks_; }
  bool prefix_caching() const { return prefix_caching_; }
  const PrefixCacheStats& stats() const { return stats_; }
  double usage() const { return 1.0 - static_cast<double>(free_blocks()) / static_cast<double>(num_blocks()); }

 private:
  bool grow(Request& request, std::int64_t blocks);
  void commit_full_blocks(Request& request);
  std::uint64_t hash_of(Request& request, std::int64_t index);
  // Whether block `index` of the request holds tokens other requests can share.
  static bool shareable(const Request& request, std::int64_t index, std::int64_t block_size);
  void insert_cached(std::int32_t block, std::uint64_t hash);
  std::int32_t take_free_block();
  void touch(std::int32_t block);
  // The free queue: a doubly linked list threaded through the block arrays (no allocation).
  void unlink_free(std::int32_t block);
  void push_free_front(std::int32_t block);
  void push_free_back(std::int32_t block);

  static constexpr std::int32_t kNone = -1;
  std::int64_t block_size_;
  bool prefix_caching_;
  std::vector<std::int32_t> ref_;
  std::vector<std::uint64_t> hash_;
  // Per block: 0 plain, kHashed in the hash map, kPrivate cached content of one request only.
  static constexpr std::uint8_t kHashed = 1, kPrivate = 2;
  std::vector<std::uint8_t> hashed_;
  std::int64_t private_blocks_ = 0;
  // Head = evicted first. Unhashed blocks go to the head, freed cached blocks to the tail (a
  // request's blocks in reverse order, so a shared head outlives its private tail).
  std::vector<std::int32_t> free_prev_, free_next_;  // kNone: end of list; both kNone and not head: held
  std::int32_t free_head_ = kNone, free_tail_ = kNone;
  std::int64_t free_count_ = 0;
  // Block hashes are already mixed 64-bit values: identity is a good enough hash.
  struct IdentityHash {
    std::size_t operator()(std::uint64_t h) const { return static_cast<std::size_t>(h); }
  };
  tsl::robin_map<std::uint64_t, std::int32_t, IdentityHash> cached_;  // lookups only: never iterated
  PrefixCacheStats stats_;
  std::unique_ptr<HostKvTier> host_;  // null: no host tier
  std::int64_t host_loads_ = 0, host_stores_ = 0;
};

}  // namespace ks::serving
