// KernelList: a value whose copies share immutable chunks, so that a chunk's identity stands for
// its content; ChunkPool: a chunk's buffer refilled only once nobody holds it.
#include "kernels/kernel_list.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace ks::kernels {
namespace {

Kernel named(const char* name, std::int64_t m = 1, OpKind op = OpKind::Gemm) {
  Kernel k{};
  k.op = op;
  k.name = name;
  k.m = m;
  return k;
}

std::vector<std::string> names(const KernelList& list) {
  std::vector<std::string> out;
  for (const Kernel& k : list) out.emplace_back(k.name);
  return out;
}

TEST(KernelList, ReadsAsOneSequenceOverItsChunks) {
  KernelList list{named("a"), named("b")};
  list.append(make_chunk(std::vector<Kernel>{}));  // dropped
  list.push_back(named("c"));
  list.append(KernelList{named("d"), named("e")});
  EXPECT_EQ(list.chunks().size(), 3u);
  EXPECT_EQ(list.size(), 5u);
  EXPECT_EQ(names(list), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_STREQ(list[3].name, "d");
  EXPECT_STREQ(list.front().name, "a");
  EXPECT_STREQ(list.back().name, "e");
  EXPECT_EQ(list.to_vector().size(), 5u);
  EXPECT_THROW(list.at(5), std::out_of_range);
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.begin(), list.end());
}

TEST(KernelList, CopiesShareChunksAndEditsNeverReachAnotherHolder) {
  const KernelList original{named("qkv", 8), named("attention", 8, OpKind::AttentionDecode), named("mlp", 8)};
  KernelList copy = original;
  EXPECT_EQ(copy.chunks(), original.chunks());  // the same objects, not equal ones

  copy.push_back(named("extra"));  // the copy grows; the original keeps its chunks
  EXPECT_EQ(copy.size(), 4u);
  EXPECT_EQ(original.size(), 3u);
  EXPECT_EQ(copy.chunks().front(), original.chunks().front());

  KernelList replaced = original;
  replaced.replace(0, make_chunk(std::vector<Kernel>{named("other", 3)}));
  EXPECT_EQ(names(replaced), (std::vector<std::string>{"other"}));
  EXPECT_EQ(names(original), (std::vector<std::string>{"qkv", "attention", "mlp"}));
  replaced.replace(0, nullptr);  // an empty chunk removes it
  EXPECT_TRUE(replaced.empty());
  EXPECT_THROW(replaced.replace(0, nullptr), std::out_of_range);
}

TEST(KernelList, KnowsWhetherACollectiveIsInIt) {
  KernelList list{named("gemm")};
  EXPECT_FALSE(list.has_collective());
  list.push_back(named("all_reduce", 1, OpKind::AllReduce));
  EXPECT_TRUE(list.has_collective());
  EXPECT_FALSE(list.chunks().front()->has_collective);
  EXPECT_TRUE(list.chunks().back()->has_collective);
}

TEST(ChunkPool, RefillsABufferOnlyOnceNobodyHoldsIt) {
  ChunkPool pool;
  const std::vector<Kernel> one{named("one")}, two{named("two")}, three{named("three")};
  ChunkPtr first = pool.make(one);
  const KernelChunk* first_buffer = first.get();
  ChunkPtr second = pool.make(two);  // `first` is held: a new buffer
  EXPECT_NE(second.get(), first_buffer);
  EXPECT_STREQ(first->kernels.front().name, "one");

  KernelList holder;
  holder.append(first);
  first.reset();
  ChunkPtr third = pool.make(three);  // `first` still held, by the list
  EXPECT_NE(third.get(), first_buffer);
  EXPECT_STREQ(holder.front().name, "one");

  holder.clear();  // now nobody holds `first`'s buffer, nor `third`'s
  const KernelChunk* third_buffer = third.get();
  third.reset();
  ChunkPtr fourth = pool.make(one);
  EXPECT_TRUE(fourth.get() == first_buffer || fourth.get() == third_buffer);
  EXPECT_NE(fourth.get(), second.get());
  EXPECT_STREQ(second->kernels.front().name, "two");
  EXPECT_STREQ(fourth->kernels.front().name, "one");
}

}  // namespace
}  // namespace ks::kernels
