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
