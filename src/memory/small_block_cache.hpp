#pragma once
// Freed small blocks kept for reuse, per size class, in front of malloc.
//
// Why: at 500 queries outstanding the forwarding path holds
// hundreds of same-sized blocks at once (hash nodes, query and answer
// buffers, callbacks) and frees them in arrival order. glibc's per-thread
// cache keeps 7 blocks per size, so nearly every malloc and free of that
// load goes through its general bins, a large share of the daemon's
// cycles; docs/performance.md, "Small blocks kept for reuse", says what
// this cache saves. It is glibc's cache made deeper, bounded in bytes.
//
// Each block is a malloc block of its class's full size, so any block can
// always go back to free(), whichever way it is released. The free lists
// are intrusive: a cached block holds the pointer to the next one.
#include <cstddef>

namespace nxdns::memory {

// The size a request of `n` octets (0..SmallBlockCache::largest) is allocated at: the
// usable size of the glibc chunk malloc(n) would take anyway (chunks are
// multiples of 16 octets with an 8-octet header, 32 at least), so the
// classes cost no memory: rounding to plain multiples of 16 would make
// every other size one chunk larger (about 0.9 MiB more with a full 16 MiB
// answer cache).
constexpr std::size_t small_block_size(std::size_t n) { return n <= 24 ? 24 : (n + 7) / 16 * 16 + 8; }

class SmallBlockCache {
 public:
  static constexpr std::size_t largest = 512;  // larger requests go straight to malloc
  static constexpr std::size_t classes = (small_block_size(largest) - 24) / 16 + 1;
  static constexpr std::size_t block_size(std::size_t n) { return small_block_size(n); }
  // What one thread may hold unused (docs/performance.md, "Small blocks kept
  // for reuse"):
  static constexpr std::size_t max_cached_bytes = std::size_t{256} << 10;

  // A cached block of block_size(n) octets, or nullptr (then malloc one of
  // that size). Precondition: n <= largest.
  void* take(std::size_t n) noexcept;
  // Keeps `p`, a block of block_size(n) octets, unless the cache is full;
  // false: the caller frees it. Precondition: n <= largest.
  bool keep(void* p, std::size_t n) noexcept;
  // Frees every cached block (a thread's end).
  void release_all() noexcept;

  std::size_t cached_bytes() const { return bytes_; }

 private:
  struct Free {
    Free* next;
  };
  static std::size_t class_of(std::size_t n) { return (block_size(n) - 24) / 16; }

  // Trivially destructible on purpose: the global operator new keeps one
  // per thread, usable until the thread's last deallocation.
  Free* heads_[classes] = {};
  std::size_t bytes_ = 0;
};

}  // namespace nxdns::memory
