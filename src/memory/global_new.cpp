// The daemon's global operator new and delete: SmallBlockCache per thread
// in front of malloc (small_block_cache.hpp says why). Linked into the
// nxdns executable only; the test binaries and the fuzzers keep the C++
// runtime's own, and so do sanitizer builds, where AddressSanitizer must see
// every allocation and free to find misuse.
#include <malloc.h>

#include <cstdlib>
#include <new>

#include "memory/small_block_cache.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define NXDNS_RUNTIME_NEW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NXDNS_RUNTIME_NEW 1
#endif
#endif

#ifndef NXDNS_RUNTIME_NEW

namespace {

using nxdns::memory::SmallBlockCache;

// Trivially destructible, so both stay usable for the whole life of their
// thread: the main thread's static destructors run after its thread_local
// ones and still delete.
thread_local SmallBlockCache t_cache;
thread_local bool t_ending = false;   // the thread's end has freed the cache: keep nothing more
thread_local bool t_watched = false;  // ThreadEnd registered for this thread

struct ThreadEnd {
  ~ThreadEnd() {
    t_ending = true;
    t_cache.release_all();
  }
};

void watch_thread_end() {
  thread_local ThreadEnd end;
  (void)end;
  t_watched = true;
}

void* allocate(std::size_t n) {
  if (n == 0) n = 1;
  for (;;) {
    if (void* p = std::malloc(n)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

void* operator new(std::size_t n) {
  if (n > SmallBlockCache::largest) return allocate(n);
  if (void* p = t_cache.take(n)) return p;
  return allocate(SmallBlockCache::block_size(n));
}

void operator delete(void* p, std::size_t n) noexcept {
  if (p == nullptr) return;
  // The size is the caller's word; the block's own usable size is checked
  // too, so a block is only ever handed out again at a size it can hold.
  if (n <= SmallBlockCache::largest && !t_ending && malloc_usable_size(p) >= SmallBlockCache::block_size(n)) {
    if (!t_watched) watch_thread_end();
    if (t_cache.keep(p, n)) return;
  }
  std::free(p);
}

// Without a size nothing says which list the block would belong to.
void operator delete(void* p) noexcept { std::free(p); }

#endif  // NXDNS_RUNTIME_NEW
