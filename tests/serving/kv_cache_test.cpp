#include "serving/kv_cache.hpp"

#include <gtest/gtest.h>

using ks::serving::KvBlockManager;
using ks::serving::Request;

TEST(KvBlockManager, ReservesWholeBlocksAndReleasesThem) {
  KvBlockManager kv(10, 16);
  Request a, b;
  EXPECT_EQ(kv.blocks_for(1), 1);
  EXPECT_EQ(kv.blocks_for(16), 1);
  EXPECT_EQ(kv.blocks_for(17), 2);
  ASSERT_TRUE(kv.reserve(a, 33));  // 3 blocks
  EXPECT_EQ(a.kv_blocks, 3);
  EXPECT_EQ(kv.free_blocks(), 7);
  ASSERT_TRUE(kv.reserve(a, 40));  // still 3 blocks
  EXPECT_EQ(kv.free_blocks(), 7);
  EXPECT_FALSE(kv.reserve(b, 16 * 8));  // 8 > 7: refused without change
  EXPECT_EQ(b.kv_blocks, 0);
  EXPECT_EQ(kv.free_blocks(), 7);
  ASSERT_TRUE(kv.reserve(b, 16 * 7));
  EXPECT_EQ(kv.free_blocks(), 0);
  EXPECT_DOUBLE_EQ(kv.usage(), 1.0);
  kv.release(a);
  EXPECT_EQ(a.kv_blocks, 0);
  EXPECT_EQ(kv.free_blocks(), 3);
  EXPECT_THROW(KvBlockManager(0, 16), std::invalid_argument);
}

namespace {
Request grouped(std::uint64_t id, std::int64_t prompt, std::uint64_t group, std::int64_t group_tokens) {
  Request r;
  r.id = id;
  r.prompt_tokens = prompt;
  r.output_tokens = 4;
  r.prefix_group = group;
  r.group_tokens = group_tokens;
  return r;
}
}  // namespace

TEST(PrefixCache, SharedPrefixBlocksAreFoundAndShared) {
  KvBlockManager kv(20, 16, true);
  Request a = grouped(1, 100, 7, 70), b = grouped(2, 90, 7, 70), c = grouped(3, 90, 8, 70);
  EXPECT_EQ(kv.cached_prefix(a), 0);
  ASSERT_TRUE(kv.allocate(a, 0, 100));  // 7 blocks
  a.computed_tokens = 100;
  kv.commit(a);  // 6 full blocks; the first 4 (64 tokens <= 70) are the group's
  EXPECT_EQ(kv.cached_blocks(), 6);
  EXPECT_EQ(kv.cached_prefix(b), 64);   // group blocks only: block 4 holds a's own tokens
  EXPECT_EQ(kv.cached_prefix(c), 0);    // another group
  ASSERT_TRUE(kv.allocate(b, 64, 90));  // 4 shared + 2 new
  EXPECT_EQ(b.block_table.size(), 6u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b.block_table[i], a.block_table[i]);
  EXPECT_EQ(kv.ref_count(a.block_table[0]), 2);
  EXPECT_EQ(kv.free_blocks(), 20 - 7 - 2);
  EXPECT_EQ(kv.stats().hit_tokens, 64);
  EXPECT_EQ(kv.stats().query_tokens, 100 + 90);
}

TEST(PrefixCache, AtLeastOneTokenIsComputed) {
  KvBlockManager kv(20, 16, true);
  Request a = grouped(1, 64, 7, 64), b = grouped(2, 64, 7, 64);
  ASSERT_TRUE(kv.allocate(a, 0, 64));
  a.computed_tokens = 64;
  kv.commit(a);
  EXPECT_EQ(kv.cached_prefix(b), 48);  // (64 - 1) / 16 = 3 blocks: the last token must be computed
}

TEST(PrefixCache, FreedCachedBlocksSurviveUntilEvictedLeastRecentlyUsedFirst) {
  KvBlockManager kv(8, 16, true);
  Request a = grouped(1, 64, 1, 64), b = grouped(2, 64, 2, 64);
  ASSERT_TRUE(kv.allocate(a, 0, 64));
  a.computed_tokens = 64;
  kv.commit(a);
  kv.release(a);  // a's 4 blocks: free but cached
  ASSERT_TRUE(kv.allocate(b, 0, 64));  // takes the 4 never-used blocks first
  b.computed_tokens = 64;
  kv.commit(b);
  kv.release(b);  // now b's blocks are the most recently freed
  EXPECT_EQ(kv.free_blocks(), 8);
  EXPECT_EQ(kv.stats().evictions, 0);
  Request a2 = grouped(3, 64, 1, 64), b2 = grouped(4, 64, 2, 64);
  EXPECT_EQ(kv.cached_prefix(a2), 48);
  // A private request of 2 blocks evicts from the head: a's tail first (freed in reverse order).
  Request x = grouped(5, 32, 0, 0);
  ASSERT_TRUE(kv.allocate(x, 0, 32));
  EXPECT_EQ(kv.stats().evictions, 2);
  EXPECT_EQ(kv.cached_prefix(a2), 32);  // a's head blocks 0-1 survived
  EXPECT_EQ(kv.cached_prefix(b2), 48);  // b untouched
  // Allocating with hits cannot take the hit blocks themselves as fresh ones.
  EXPECT_FALSE(kv.allocate(b2, 48, 16 * 7));  // 3 hits + 4 fresh > 6 free - 3 hit
  EXPECT_TRUE(kv.allocate(b2, 48, 16 * 6));
  EXPECT_EQ(kv.free_blocks(), 0);
}

TEST(PrefixCache, DisabledFindsNothing) {
  KvBlockManager kv(20, 16, false);
  Request a = grouped(1, 100, 7, 70), b = grouped(2, 90, 7, 70);
  ASSERT_TRUE(kv.allocate(a, 0, 100));
  a.computed_tokens = 100;
  kv.commit(a);
  EXPECT_EQ(kv.cached_prefix(b), 0);
  EXPECT_EQ(kv.cached_blocks(), 0);
}

TEST(PrefixCache, TokenIdsDecideWhenGiven) {
  KvBlockManager kv(20, 4, true);
  auto ids = std::make_shared<std::vector<std::int32_t>>(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto other = std::make_shared<std::vector<std::int32_t>>(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6, 0, 8, 9});
  Request a = grouped(1, 9, 0, 0), b = grouped(2, 9, 0, 0);
  a.prompt_ids = ids;
  b.prompt_ids = other;
  ASSERT_TRUE(kv.allocate(a, 0, 9));
  a.computed_tokens = 9;
  kv.commit(a);
  EXPECT_EQ(kv.cached_prefix(b), 4);  // first block equal, second differs at token 7
}

// A preempted request finds its own blocks again (they were its alone, so only it can); once a
// request has finished, its private blocks keep their LRU place and count as evictions when
// reused, but nothing can hit them.
TEST(PrefixCache, PreemptedRequestRecoversItsPrivateBlocks) {
  KvBlockManager kv(8, 16, true);
  Request a = grouped(1, 64, 0, 0);
  ASSERT_TRUE(kv.allocate(a, 0, 64));
  a.computed_tokens = 64;
  kv.commit(a);
  EXPECT_EQ(kv.cached_blocks(), 4);
  kv.release(a);  // preempted (not finished): recomputed later
  a.computed_tokens = 0;
  EXPECT_EQ(kv.cached_prefix(a), 48);  // 3 whole blocks; the last token is computed again

  Request b = grouped(2, 64, 0, 0);
  ASSERT_TRUE(kv.allocate(b, 0, 64));
  b.computed_tokens = 64;
  b.generated = b.output_tokens;  // finished
  kv.commit(b);
  kv.release(b);
  Request b_again = grouped(2, 64, 0, 0);  // the same id and length: still nothing to hit
  b_again.id = 3;
  EXPECT_EQ(kv.cached_prefix(b_again), 0);
  EXPECT_EQ(kv.cached_blocks(), 8);  // a's 4 (hashed) and b's 4 (private, dead) keep their places
  Request x = grouped(4, 16 * 6, 0, 0);  // takes the free head first: a's tail, then older blocks
  ASSERT_TRUE(kv.allocate(x, 0, 16 * 6));
  EXPECT_EQ(kv.stats().evictions, 6);
  EXPECT_EQ(kv.cached_blocks(), 2);
}
