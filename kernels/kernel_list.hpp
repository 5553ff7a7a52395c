#pragma once
// A list of kernels as a value shared in immutable pieces: a sequence of chunks, each an
// immutable vector of kernels held by reference count. Copying a list copies pointers; editing one
// never changes a chunk another list holds (copy on write). So a chunk's identity stands for its
// content: whoever derived something from a chunk (the GPU its prices) keeps the chunk and, when
// the same chunk comes again, knows its kernels are the same without comparing them.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <vector>

#include <boost/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>

#include "kernels/kernel.hpp"

namespace ks::kernels {

// Immutable once shared. `has_collective` is derived from the kernels when the chunk is made.
// Counted without atomics: a step's kernels stay on the thread that simulates them (a SystemC
// simulation runs on one), and a reference count changes several times per simulated step.
struct KernelChunk : boost::intrusive_ref_counter<KernelChunk, boost::thread_unsafe_counter> {
  std::vector<Kernel> kernels;
  bool has_collective = false;
  // Derives what is derived from the kernels; called once they are in, before the chunk is shared.
  void seal() {
    has_collective = std::any_of(kernels.begin(), kernels.end(), [](const Kernel& k) { return is_collective(k.op); });
  }
};
using ChunkPtr = boost::intrusive_ptr<const KernelChunk>;
using ChunkList = std::vector<ChunkPtr>;

// A chunk holding kernels [first, last), newly allocated.
ChunkPtr make_chunk(const Kernel* first, const Kernel* last);
inline ChunkPtr make_chunk(const std::vector<Kernel>& kernels) {
  return make_chunk(kernels.data(), kernels.data() + kernels.size());
}

// Chunks for a producer that makes new ones every step (the step decomposer): the buffer of a
// chunk this pool made and nobody holds any more is refilled instead of a new one allocated.
// Sound because a chunk is only changed while no list holds it.
class ChunkPool {
 public:
  // A chunk whose kernels `fill(std::vector<Kernel>&)` appends to an empty list.
  template <class Fill>
  ChunkPtr make_by(Fill fill) {
    boost::intrusive_ptr<KernelChunk> chunk = take();
    chunk->kernels.clear();
    fill(chunk->kernels);
    chunk->seal();
    return chunk;
  }
  ChunkPtr make(const Kernel* first, const Kernel* last) {
    return make_by([&](std::vector<Kernel>& kernels) { kernels.assign(first, last); });
  }
  ChunkPtr make(const std::vector<Kernel>& kernels) { return make(kernels.data(), kernels.data() + kernels.size()); }

 private:
  // A chunk nobody else holds (kept by the pool while it has room). Usually the entry after the
  // last one taken (the oldest) is free: that check is inline.
  boost::intrusive_ptr<KernelChunk> take() {
    const std::size_t next = cursor_ + 1 >= entries_.size() ? 0 : cursor_ + 1;
    if (next < entries_.size() && entries_[next]->use_count() == 1) {
      cursor_ = next;
      return entries_[next];
    }
    return search();
  }
  boost::intrusive_ptr<KernelChunk> search();
  static constexpr std::size_t kMaxEntries = 32;  // beyond: chunks held elsewhere, allocated anew
  std::vector<boost::intrusive_ptr<KernelChunk>> entries_;
  std::size_t cursor_ = 0;
};

class KernelList {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Kernel;
    using difference_type = std::ptrdiff_t;
    using pointer = const Kernel*;
    using reference = const Kernel&;
    const_iterator() = default;
    reference operator*() const { return (*chunk_)->kernels[pos_]; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      if (++pos_ == (*chunk_)->kernels.size()) {
        ++chunk_;
        pos_ = 0;
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& o) const { return chunk_ == o.chunk_ && pos_ == o.pos_; }
    bool operator!=(const const_iterator& o) const { return !(*this == o); }

   private:
    friend class KernelList;
    const_iterator(const ChunkPtr* chunk, std::size_t pos) : chunk_(chunk), pos_(pos) {}
    const ChunkPtr* chunk_ = nullptr;
    std::size_t pos_ = 0;
  };
  using iterator = const_iterator;
  using value_type = Kernel;
  using size_type = std::size_t;

  KernelList() = default;
  KernelList(const KernelList&) = default;
  KernelList(KernelList&&) noexcept = default;
  KernelList& operator=(KernelList&&) noexcept = default;
  // Chunks already the same objects are left alone: a consumer's copy of consecutive steps
  // (the host's launch payload) then costs a pointer compare per chunk, no reference counting.
  KernelList& operator=(const KernelList& other) {
    if (chunks_.size() != other.chunks_.size()) {
      chunks_ = other.chunks_;
    } else {
      for (std::size_t c = 0; c < chunks_.size(); ++c)
        if (chunks_[c] != other.chunks_[c]) chunks_[c] = other.chunks_[c];
    }
    size_ = other.size_;
    collective_chunks_ = other.collective_chunks_;
    return *this;
  }
  KernelList(std::initializer_list<Kernel> kernels);
  KernelList& operator=(std::initializer_list<Kernel> kernels);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Kernel& operator[](std::size_t i) const;  // throws std::out_of_range, as at()
  const Kernel& at(std::size_t i) const { return (*this)[i]; }
  const Kernel& front() const { return chunks_.front()->kernels.front(); }
  const Kernel& back() const { return chunks_.back()->kernels.back(); }
  const_iterator begin() const { return {chunks_.data(), 0}; }
  const_iterator end() const { return {chunks_.data() + chunks_.size(), 0}; }
  std::vector<Kernel> to_vector() const { return {begin(), end()}; }

  // The chunks, none empty; a chunk may appear more than once (an MoE model's dense layers).
  const ChunkList& chunks() const { return chunks_; }
  bool has_collective() const { return collective_chunks_ > 0; }

  void clear();
  void push_back(const Kernel& kernel);   // appends a chunk of one kernel
  void append(ChunkPtr chunk);            // an empty chunk is dropped
  void append(const KernelList& other);   // shares the other list's chunks
  // Chunk `index` replaced (an empty chunk removes it).
  void replace(std::size_t index, ChunkPtr chunk) {
    if (index >= chunks_.size() || chunk == nullptr || chunk->kernels.empty()) return remove(index);
    const KernelChunk& old = *chunks_[index];
    size_ += chunk->kernels.size() - old.kernels.size();
    collective_chunks_ += static_cast<std::size_t>(chunk->has_collective) - static_cast<std::size_t>(old.has_collective);
    chunks_[index] = std::move(chunk);
  }

 private:
  void remove(std::size_t index);  // throws std::out_of_range past the last chunk
  ChunkList chunks_;
  std::size_t size_ = 0;
  std::size_t collective_chunks_ = 0;  // chunks with a collective
};

}  // namespace ks::kernels
