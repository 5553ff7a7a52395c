#pragma once
// Paged KV cache accounting (vLLM's block manager, without prefix caching yet): a request holds
// ceil(tokens / block_size) blocks of a fixed pool.
#include <cstdint>

#include "serving/request.hpp"

namespace ks::serving {

class KvBlockManager {
 public:
  KvBlockManager(std::int64_t num_blocks, std::int64_t block_size);

  std::int64_t blocks_for(std::int64_t tokens) const { return (tokens + block_size_ - 1) / block_size_; }
  // Grows the request's allocation to hold `tokens` tokens; false (and no change) if the pool is short.
  bool reserve(Request& request, std::int64_t tokens);
  void release(Request& request);

  std::int64_t num_blocks() const { return num_blocks_; }
  std::int64_t free_blocks() const { return free_blocks_; }
  std::int64_t block_size() const { return block_size_; }
  double usage() const { return 1.0 - static_cast<double>(free_blocks_) / static_cast<double>(num_blocks_); }

 private:
  std::int64_t num_blocks_;
  std::int64_t block_size_;
  std::int64_t free_blocks_;
};

}  // namespace ks::serving
