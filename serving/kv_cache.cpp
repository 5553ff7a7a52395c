#include "serving/kv_cache.hpp"

#include <stdexcept>

namespace ks::serving {

KvBlockManager::KvBlockManager(std::int64_t num_blocks, std::int64_t block_size)
    : num_blocks_(num_blocks), block_size_(block_size), free_blocks_(num_blocks) {
  if (num_blocks <= 0) throw std::invalid_argument("KV cache needs at least one block");
  if (block_size <= 0) throw std::invalid_argument("KV block size must be positive");
}

bool KvBlockManager::reserve(Request& request, std::int64_t tokens) {
  const std::int64_t needed = blocks_for(tokens) - request.kv_blocks;
  if (needed <= 0) return true;
  if (needed > free_blocks_) return false;
  free_blocks_ -= needed;
  request.kv_blocks += needed;
  return true;
}

void KvBlockManager::release(Request& request) {
  free_blocks_ += request.kv_blocks;
  request.kv_blocks = 0;
}

}  // namespace ks::serving
