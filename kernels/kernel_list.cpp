#include "kernels/kernel_list.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace ks::kernels {

ChunkPtr make_chunk(const Kernel* first, const Kernel* last) {
  boost::intrusive_ptr<KernelChunk> chunk(new KernelChunk);
  chunk->kernels.assign(first, last);
  chunk->seal();
  return chunk;
}

boost::intrusive_ptr<KernelChunk> ChunkPool::search() {
  // From the entry after the last one taken: the oldest chunks are the likeliest to be free.
  const std::size_t n = entries_.size();
  for (std::size_t tried = 0; tried < n; ++tried) {
    cursor_ = cursor_ + 1 >= n ? 0 : cursor_ + 1;
    if (entries_[cursor_]->use_count() == 1) return entries_[cursor_];  // only the pool holds it
  }
  boost::intrusive_ptr<KernelChunk> chunk(new KernelChunk);
  if (n < kMaxEntries) {
    entries_.push_back(chunk);
    cursor_ = n;
  }
  return chunk;
}

KernelList::KernelList(std::initializer_list<Kernel> kernels) {
  append(make_chunk(kernels.begin(), kernels.end()));
}

KernelList& KernelList::operator=(std::initializer_list<Kernel> kernels) {
  clear();
  append(make_chunk(kernels.begin(), kernels.end()));
  return *this;
}

const Kernel& KernelList::operator[](std::size_t i) const {
  for (const ChunkPtr& c : chunks_) {
    if (i < c->kernels.size()) return c->kernels[i];
    i -= c->kernels.size();
  }
  throw std::out_of_range("KernelList index out of range (size " + std::to_string(size_) + ")");
}

void KernelList::clear() {
  chunks_.clear();
  size_ = 0;
  collective_chunks_ = 0;
}

void KernelList::push_back(const Kernel& kernel) { append(make_chunk(&kernel, &kernel + 1)); }

void KernelList::append(ChunkPtr chunk) {
  if (chunk == nullptr || chunk->kernels.empty()) return;
  size_ += chunk->kernels.size();
  collective_chunks_ += chunk->has_collective ? 1 : 0;
  chunks_.push_back(std::move(chunk));
}

void KernelList::append(const KernelList& other) {
  if (&other == this) {
    const ChunkList copy = other.chunks_;
    for (const ChunkPtr& c : copy) append(c);
    return;
  }
  for (const ChunkPtr& c : other.chunks_) append(c);
}

void KernelList::remove(std::size_t index) {
  if (index >= chunks_.size())
    throw std::out_of_range("KernelList: no chunk " + std::to_string(index) + " of " +
                            std::to_string(chunks_.size()));
  size_ -= chunks_[index]->kernels.size();
  collective_chunks_ -= chunks_[index]->has_collective ? 1 : 0;
  chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(index));
}

}  // namespace ks::kernels
