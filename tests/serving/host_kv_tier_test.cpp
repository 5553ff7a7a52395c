// The host KV tier alone and inside the paged KV cache: LRU order, write-back of HBM evictions,
// prefix hits served from the host. Every expectation is worked out by hand in the comments.
#include <gtest/gtest.h>

#include <stdexcept>

#include "serving/host_kv_tier.hpp"
#include "serving/kv_cache.hpp"

using ks::serving::block_hash;
using ks::serving::HostKvTier;
using ks::serving::KvBlockManager;
using ks::serving::Request;

TEST(HostKvTier, EvictsTheLeastRecentlyUsedBlockWhenFull) {
  HostKvTier host(2);
  EXPECT_TRUE(host.store(11));   // [11]
  EXPECT_TRUE(host.store(22));   // [11, 22]
  EXPECT_FALSE(host.store(11));  // already held: no copy, now most recent: [22, 11]
  EXPECT_EQ(host.lru(), 22u);
  EXPECT_TRUE(host.store(33));   // full: drops 22 -> [11, 33]
  EXPECT_FALSE(host.contains(22));
  EXPECT_TRUE(host.contains(11));
  EXPECT_TRUE(host.contains(33));
  host.load(11, 16);             // [33, 11]
  EXPECT_TRUE(host.store(44));   // drops 33 -> [11, 44]
  EXPECT_FALSE(host.contains(33));
  EXPECT_EQ(host.stats().stored_blocks, 4);  // 11, 22, 33, 44
  EXPECT_EQ(host.stats().evicted_blocks, 2);
  EXPECT_EQ(host.stats().loaded_blocks, 1);
  EXPECT_EQ(host.stats().hit_tokens, 16);
  EXPECT_THROW(host.load(33, 16), std::logic_error);
}

TEST(HostKvTier, RefusesSizesWithoutRoomForABlock) {
  EXPECT_THROW(HostKvTier(0), std::invalid_argument);
  EXPECT_THROW(HostKvTier(-3), std::invalid_argument);
  KvBlockManager no_prefix_caching(4, 16, false);
  EXPECT_THROW(no_prefix_caching.enable_host_tier(8), std::invalid_argument);
  KvBlockManager kv(4, 16, true);
  EXPECT_THROW(kv.enable_host_tier(0), std::invalid_argument);
}

namespace {

Request grouped(std::uint64_t id, std::uint64_t group, std::int64_t prompt) {
  Request r;
  r.id = id;
  r.prefix_group = group;
  r.group_tokens = 64;
  r.prompt_tokens = prompt;
  r.output_tokens = 1;
  return r;
}

// A (group 1, 8 tokens = 2 blocks of 4) runs and finishes; B (group 2, 12 tokens) then needs all
// 3 HBM blocks and evicts A's two; C (group 1, 9 tokens) comes back for A's prefix.
struct Scenario {
  KvBlockManager kv;
  Request a = grouped(1, 1, 8), b = grouped(2, 2, 12), c = grouped(3, 1, 9);
  explicit Scenario(bool host) : kv(3, 4, true) {
    if (host) kv.enable_host_tier(4);
  }
  void run_a_and_b() {
    ASSERT_TRUE(kv.allocate(a, 0, 8));  // blocks 0, 1; free queue [2]
    a.computed_tokens = 8;
    kv.commit(a);
    a.generated = 1;
    kv.release(a);  // tail first: free queue [2, 1 (A's block 1), 0 (A's block 0)]
    ASSERT_TRUE(kv.allocate(b, 0, 12));  // takes 2, then evicts 1 and 0
    b.computed_tokens = 12;
    kv.commit(b);
    b.generated = 1;
    kv.release(b);  // B's table [2, 1, 0] released tail first: free queue [0, 1, 2]
  }
};

}  // namespace

TEST(HostKvTier, HbmEvictionsGoToTheHostAndPrefixHitsLoadThemBack) {
  Scenario s(true);
  s.run_a_and_b();
  // A's blocks were written back in eviction order: block 1's content first (LRU), then block 0's.
  const std::uint64_t a0 = block_hash(s.a, 0, 4, 0), a1 = block_hash(s.a, 1, 4, a0);
  EXPECT_EQ(s.kv.take_host_stores(), 2);
  EXPECT_EQ(s.kv.take_host_stores(), 0);  // taken
  EXPECT_EQ(s.kv.host_tier()->lru(), a1);
  EXPECT_EQ(s.kv.stats().evictions, 2);

  // C: (9 - 1) / 4 = 2 whole blocks can hit, both on the host.
  EXPECT_EQ(s.kv.cached_prefix(s.c), 8);
  ASSERT_TRUE(s.kv.allocate(s.c, 8, 9));  // 2 loads + 1 fresh block = 3 HBM blocks (B's, evicted)
  EXPECT_EQ(s.kv.take_host_loads(), 2);
  // B's three blocks were written back; the host (4 blocks) held [a1, a0] then read a0, a1
  // ([a0, a1]), took b2, b1 ([a0, a1, b2, b1]) and, full, dropped a0 for b0.
  EXPECT_EQ(s.kv.take_host_stores(), 3);
  const HostKvTier& host = *s.kv.host_tier();
  EXPECT_EQ(host.size(), 4);
  EXPECT_FALSE(host.contains(a0));
  EXPECT_EQ(host.lru(), a1);
  EXPECT_EQ(host.stats().stored_blocks, 5);
  EXPECT_EQ(host.stats().loaded_blocks, 2);
  EXPECT_EQ(host.stats().evicted_blocks, 1);
  EXPECT_EQ(host.stats().hit_tokens, 8);
  EXPECT_EQ(s.kv.stats().hit_tokens, 8);
  EXPECT_EQ(s.c.kv_committed_blocks, 2);
  // The loaded blocks are in HBM's prefix cache again: a request D of group 1 hits them there.
  Request d = grouped(4, 1, 9);
  EXPECT_EQ(s.kv.cached_prefix(d), 8);
  EXPECT_FALSE(s.kv.allocate(d, 8, 9));  // shares C's two blocks but needs 1 fresh: none left
  s.kv.release(s.c);
  ASSERT_TRUE(s.kv.allocate(d, 8, 9));  // now the 2 hits sit in the free queue, 1 block beside them
  EXPECT_EQ(s.kv.take_host_loads(), 0);
  EXPECT_EQ(s.kv.host_tier()->stats().loaded_blocks, 2);
}

TEST(HostKvTier, OffChangesNothing) {
  Scenario s(false);
  s.run_a_and_b();
  EXPECT_EQ(s.kv.host_tier(), nullptr);
  EXPECT_EQ(s.kv.take_host_stores(), 0);
  EXPECT_EQ(s.kv.stats().evictions, 2);
  EXPECT_EQ(s.kv.cached_prefix(s.c), 0);  // A's prefix is gone with HBM's copy
  ASSERT_TRUE(s.kv.allocate(s.c, 0, 9));
  EXPECT_EQ(s.kv.take_host_loads(), 0);
  EXPECT_EQ(s.kv.stats().hit_tokens, 0);
}
