// Which prefill rank sends which KV bytes to which decode rank (serving/pd_transfer_plan.hpp).
// Expected shares worked out by hand from the models' config.json.
#include <gtest/gtest.h>

#include <stdexcept>

#include "kernels/model_config.hpp"
#include "serving/pd_transfer_plan.hpp"

using namespace ks;

namespace {

const kernels::ModelConfig& model(const char* name) {
  const kernels::ModelConfig* m = kernels::find_builtin_model(name);
  if (m == nullptr) throw std::runtime_error(name);
  return *m;
}

// Llama-3-70B: 80 layers x 8 KV heads x 128 dims x (K, V) x 2 bytes = 327,680 B a token, 40,960 a head.
constexpr double kLlama70bToken = 80.0 * 8 * 128 * 2 * 2;
constexpr double kLlama70bHead = kLlama70bToken / 8;

double total(const std::vector<serving::KvRankShare>& shares) {
  double t = 0;
  for (const auto& s : shares) t += s.bytes_per_token;
  return t;
}

}  // namespace

TEST(PdTransferPlan, SameTpSendsEachRankItsOwnShard) {
  const auto shares = serving::kv_rank_shares(model("llama-3-70b"), kernels::DType::BF16, 4, 4);
  ASSERT_EQ(shares.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(shares[r].src_rank, r);
    EXPECT_EQ(shares[r].dst_rank, r);
    EXPECT_DOUBLE_EQ(shares[r].bytes_per_token, 2 * kLlama70bHead);  // heads 2r, 2r+1
  }
  EXPECT_DOUBLE_EQ(total(shares), kLlama70bToken);
}

TEST(PdTransferPlan, SmallerPrefillTpSplitsEachPrefillShardOverTwoDecodeRanks) {
  // Prefill TP2: rank 0 holds heads 0-3, rank 1 heads 4-7. Decode TP4: rank d holds heads 2d, 2d+1.
  const auto shares = serving::kv_rank_shares(model("llama-3-70b"), kernels::DType::BF16, 2, 4);
  ASSERT_EQ(shares.size(), 4u);
  const int src[4] = {0, 0, 1, 1};
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(shares[d].src_rank, src[d]);
    EXPECT_EQ(shares[d].dst_rank, d);
    EXPECT_DOUBLE_EQ(shares[d].bytes_per_token, 2 * kLlama70bHead);
  }
}

TEST(PdTransferPlan, LargerPrefillTpGathersOneDecodeShardFromSeveralPrefillRanks) {
  // Prefill TP8: rank r holds head r. Decode TP2: rank 0 heads 0-3 from prefill ranks 0-3.
  const auto shares = serving::kv_rank_shares(model("llama-3-70b"), kernels::DType::BF16, 8, 2);
  ASSERT_EQ(shares.size(), 8u);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(shares[r].src_rank, r);
    EXPECT_EQ(shares[r].dst_rank, r / 4);
    EXPECT_DOUBLE_EQ(shares[r].bytes_per_token, kLlama70bHead);
  }
  EXPECT_DOUBLE_EQ(total(shares), kLlama70bToken);
}

TEST(PdTransferPlan, ReplicatedHeadsComeFromTheMatchingReplica) {
  // Llama-3-70B at TP16 holds each of its 8 KV heads twice (ranks 2h and 2h+1); a decode TP16
  // rank d holds head d/2 and receives it from prefill rank d (TP16 -> TP16: rank to rank).
  const auto same = serving::kv_rank_shares(model("llama-3-70b"), kernels::DType::BF16, 16, 16);
  ASSERT_EQ(same.size(), 16u);
  for (int d = 0; d < 16; ++d) {
    EXPECT_EQ(same[d].src_rank, d);
    EXPECT_DOUBLE_EQ(same[d].bytes_per_token, kLlama70bHead);
  }
  // Prefill TP16 -> decode TP8: decode rank d holds head d, held by prefill ranks 2d, 2d+1; the
  // copy comes from 2d + d mod 2.
  const auto down = serving::kv_rank_shares(model("llama-3-70b"), kernels::DType::BF16, 16, 8);
  ASSERT_EQ(down.size(), 8u);
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(down[d].dst_rank, d);
    EXPECT_EQ(down[d].src_rank, 2 * d + d % 2);
  }
}

TEST(PdTransferPlan, MlaLatentIsWholeOnEveryDecodeRank) {
  // DeepSeek-V3: 61 layers x (512 latent + 64 rope) x 2 bytes = 70,272 B a token, replicated.
  const double token = 61.0 * (512 + 64) * 2;
  const auto shares = serving::kv_rank_shares(model("deepseek-v3"), kernels::DType::BF16, 4, 8);
  ASSERT_EQ(shares.size(), 8u);
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(shares[d].src_rank, d % 4);
    EXPECT_EQ(shares[d].dst_rank, d);
    EXPECT_DOUBLE_EQ(shares[d].bytes_per_token, token);
  }
}

TEST(PdTransferPlan, RefusesATpThatCannotSplitTheHeads) {
  // 8 KV heads: tp 3 neither divides them nor is divided by them.
  EXPECT_THROW(serving::kv_rank_shares(model("llama-3-70b"), kernels::DType::BF16, 3, 4), std::invalid_argument);
  EXPECT_THROW(serving::kv_rank_shares(model("llama-3-70b"), kernels::DType::BF16, 4, 3), std::invalid_argument);
}
