#include "serving/kv_cache.hpp"

#include <algorithm>
#include <stdexcept>

namespace ks::serving {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t block_hash(const Request& r, std::int64_t index, std::int64_t block_size, std::uint64_t parent) {
  const std::int64_t begin = index * block_size;
  const std::int64_t end = begin + block_size;
  std::uint64_t content;
  if (r.prompt_ids && end <= static_cast<std::int64_t>(r.prompt_ids->size())) {
    content = 0x5bd1e995ULL;
    for (std::int64_t i = begin; i < end; ++i)
      content = mix(content ^ static_cast<std::uint32_t>((*r.prompt_ids)[static_cast<std::size_t>(i)]));
  } else if (r.prefix_group != 0 && end <= r.group_tokens) {
    content = mix(mix(r.prefix_group) ^ static_cast<std::uint64_t>(index));
  } else {
    // Tokens of this request alone: unique to (request, block).
    content = mix(mix(r.id ^ 0xa5a5a5a5a5a5a5a5ULL) + static_cast<std::uint64_t>(index) * 0x100000001b3ULL);
  }
  return mix(parent ^ mix(content));
}

KvBlockManager::KvBlockManager(std::int64_t num_blocks, std::int64_t block_size, bool prefix_caching)
    : block_size_(block_size), prefix_caching_(prefix_caching) {
  if (num_blocks <= 0) throw std::invalid_argument("KV cache needs at least one block");
  if (block_size <= 0) throw std::invalid_argument("KV block size must be positive");
  const auto n = static_cast<std::size_t>(num_blocks);
  ref_.assign(n, 0);
  hash_.assign(n, 0);
  hashed_.assign(n, 0);
  free_prev_.assign(n, kNone);
  free_next_.assign(n, kNone);
  for (std::size_t b = 0; b < n; ++b) push_free_back(static_cast<std::int32_t>(b));
}

void KvBlockManager::enable_host_tier(std::int64_t capacity_blocks) {
  if (!prefix_caching_) throw std::invalid_argument("a host KV tier needs prefix caching (its blocks are found by hash)");
  host_ = std::make_unique<HostKvTier>(capacity_blocks);
}

void KvBlockManager::unlink_free(std::int32_t b) {
  const auto i = static_cast<std::size_t>(b);
  const std::int32_t prev = free_prev_[i], next = free_next_[i];
  (prev == kNone ? free_head_ : free_next_[static_cast<std::size_t>(prev)]) = next;
  (next == kNone ? free_tail_ : free_prev_[static_cast<std::size_t>(next)]) = prev;
  free_prev_[i] = free_next_[i] = kNone;
  --free_count_;
}

void KvBlockManager::push_free_front(std::int32_t b) {
  const auto i = static_cast<std::size_t>(b);
  free_prev_[i] = kNone;
  free_next_[i] = free_head_;
  (free_head_ == kNone ? free_tail_ : free_prev_[static_cast<std::size_t>(free_head_)]) = b;
  free_head_ = b;
  ++free_count_;
}

void KvBlockManager::push_free_back(std::int32_t b) {
  const auto i = static_cast<std::size_t>(b);
  free_next_[i] = kNone;
  free_prev_[i] = free_tail_;
  (free_tail_ == kNone ? free_head_ : free_next_[static_cast<std::size_t>(free_tail_)]) = b;
  free_tail_ = b;
  ++free_count_;
}

std::uint64_t KvBlockManager::hash_of(Request& r, std::int64_t index) {
  while (static_cast<std::int64_t>(r.block_hashes.size()) <= index) {
    const auto i = static_cast<std::int64_t>(r.block_hashes.size());
    r.block_hashes.push_back(block_hash(r, i, block_size_, i == 0 ? 0 : r.block_hashes.back()));
  }
  return r.block_hashes[static_cast<std::size_t>(index)];
}

bool KvBlockManager::shareable(const Request& r, std::int64_t index, std::int64_t block_size) {
  const std::int64_t end = (index + 1) * block_size;
  return (r.prompt_ids && end <= static_cast<std::int64_t>(r.prompt_ids->size())) ||
         (r.prefix_group != 0 && end <= r.group_tokens);
}

void KvBlockManager::insert_cached(std::int32_t block, std::uint64_t hash) {
  // A second copy of content already cached stays unhashed: it is freed first, and the cache
  // keeps one block per hash.
  if (!cached_.emplace(hash, block).second) return;
  const auto i = static_cast<std::size_t>(block);
  hash_[i] = hash;
  hashed_[i] = kHashed;
}

std::int64_t KvBlockManager::cached_prefix(Request& r) {
  if (!prefix_caching_ || !r.block_table.empty()) return 0;
  const std::int64_t max_blocks = (r.sequence_length() - 1) / block_size_;
  std::int64_t hits = 0;
  while (hits < max_blocks) {
    const std::uint64_t h = hash_of(r, hits);
    if (cached_.count(h) == 0 && (!host_ || !host_->contains(h))) break;
    ++hits;
  }
  return hits * block_size_;
}

std::int32_t KvBlockManager::take_free_block() {
  const std::int32_t b = free_head_;
  unlink_free(b);
  const auto i = static_cast<std::size_t>(b);
  if (hashed_[i] != 0) {  // evict its cached content
    if (hashed_[i] == kHashed) {
      auto it = cached_.find(hash_[i]);
      if (it != cached_.end() && it->second == b) {
        cached_.erase(it);
        // Written back to the host tier (SGLang HiCache's write_back): a copy only if it lacks it.
        if (host_ && host_->store(hash_[i])) ++host_stores_;
      }
    } else {
      --private_blocks_;
    }
    hashed_[i] = 0;
    ++stats_.evictions;
  }
  ref_[i] = 1;
  return b;
}

void KvBlockManager::touch(std::int32_t b) {
  const auto i = static_cast<std::size_t>(b);
  if (ref_[i] == 0) unlink_free(b);
  ++ref_[i];
}

bool KvBlockManager::allocate(Request& r, std::int64_t hit_tokens, std::int64_t tokens) {
  if (!r.block_table.empty()) throw std::logic_error("KvBlockManager::allocate: request already holds blocks");
  const std::int64_t hit_blocks = hit_tokens / block_size_;
  std::vector<std::int32_t> hits;  // kNone: a block to load from the host tier
  std::int64_t hits_free = 0;  // hit blocks that currently sit in the free queue
  std::int64_t host_hits = 0;
  for (std::int64_t b = 0; b < hit_blocks; ++b) {
    const std::uint64_t h = hash_of(r, b);
    const auto it = cached_.find(h);
    if (it == cached_.end()) {
      if (!host_ || !host_->contains(h)) throw std::out_of_range("KvBlockManager::allocate: block not cached");
      hits.push_back(kNone);
      ++host_hits;
      continue;
    }
    hits.push_back(it->second);
    if (ref_[static_cast<std::size_t>(it->second)] == 0) ++hits_free;
  }
  const std::int64_t fresh = std::max<std::int64_t>(0, blocks_for(tokens) - hit_blocks);
  if (fresh + host_hits > free_blocks() - hits_free) return false;
  for (std::int32_t b : hits)
    if (b != kNone) touch(b);  // before taking fresh ones, so they are not evicted
  if (host_hits > 0) {
    // The host copies are read first (each becomes the most recently used host block), then
    // fresh HBM blocks take them: the HBM evictions that make room, written back to the host,
    // may push host blocks out but never content this request is still to read.
    for (std::int64_t b = 0; b < hit_blocks; ++b)
      if (hits[static_cast<std::size_t>(b)] == kNone) host_->load(hash_of(r, b), block_size_);
    for (std::int64_t b = 0; b < hit_blocks; ++b) {
      if (hits[static_cast<std::size_t>(b)] != kNone) continue;
      const std::int32_t block = take_free_block();
      insert_cached(block, hash_of(r, b));
      hits[static_cast<std::size_t>(b)] = block;
    }
    host_loads_ += host_hits;
  }
  r.block_table = std::move(hits);
  for (std::int64_t i = 0; i < fresh; ++i) r.block_table.push_back(take_free_block());
  r.kv_blocks = static_cast<std::int64_t>(r.block_table.size());
  r.kv_committed_blocks = hit_blocks;
  if (prefix_caching_) {
    stats_.query_tokens += r.sequence_length();
    stats_.hit_tokens += hit_blocks * block_size_;
  }
  return true;
}

bool KvBlockManager::grow(Request& r, std::int64_t needed) {
  if (needed > free_blocks()) return false;
  for (std::int64_t i = 0; i < needed; ++i) r.block_table.push_back(take_free_block());
  r.kv_blocks = static_cast<std::int64_t>(r.block_table.size());
  return true;
}

void KvBlockManager::commit_full_blocks(Request& r) {
  const std::int64_t full = std::min<std::int64_t>(r.computed_tokens / block_size_,
                                                   static_cast<std::int64_t>(r.block_table.size()));
  for (std::int64_t b = r.kv_committed_blocks; b < full; ++b) {
    const std::int32_t block = r.block_table[static_cast<std::size_t>(b)];
    const auto i = static_cast<std::size_t>(block);
    if (hashed_[i] != 0) continue;
    if (shareable(r, b, block_size_)) {
      insert_cached(block, hash_of(r, b));
    } else {  // this request's alone: into the map only if it is preempted (release)
      hashed_[i] = kPrivate;
      ++private_blocks_;
    }
  }
  r.kv_committed_blocks = std::max(r.kv_committed_blocks, full);
}

void KvBlockManager::release(Request& r) {
  if (!r.finished()) {  // preempted: its private blocks may serve its own recomputation
    for (std::size_t b = 0; b < r.block_table.size(); ++b) {
      const std::int32_t block = r.block_table[b];
      const auto i = static_cast<std::size_t>(block);
      if (hashed_[i] != kPrivate) continue;
      hashed_[i] = 0;
      --private_blocks_;
      insert_cached(block, hash_of(r, static_cast<std::int64_t>(b)));
    }
  }
  for (auto it = r.block_table.rbegin(); it != r.block_table.rend(); ++it) {
    const auto i = static_cast<std::size_t>(*it);
    if (--ref_[i] > 0) continue;
    if (hashed_[i] != 0) push_free_back(*it);
    else push_free_front(*it);
  }
  r.block_table.clear();
  r.kv_blocks = 0;
  r.kv_committed_blocks = 0;
}

void KvBlockManager::shrink(Request& r, std::int64_t tokens) {
  const auto keep = static_cast<std::size_t>(std::max<std::int64_t>(blocks_for(tokens), r.kv_committed_blocks));
  while (r.block_table.size() > keep) {
    const std::int32_t block = r.block_table.back();
    r.block_table.pop_back();
    const auto i = static_cast<std::size_t>(block);
    if (--ref_[i] > 0) continue;
    if (hashed_[i] != 0) push_free_back(block);
    else push_free_front(block);
  }
  r.kv_blocks = static_cast<std::int64_t>(r.block_table.size());
}

}  // namespace ks::serving
