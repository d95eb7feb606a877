// memory::SmallBlockCache: the size classes, reuse in last-freed-first
// order, the byte bound that keeps a burst's peak from being held for ever,
// and release_all. Blocks are malloc'ed at their class's size, as the
// daemon's operator new allocates them. (std::malloc) and (std::free),
// parenthesized: CppUTest's leak detector redefines malloc and free as
// macros, and its blocks carry a header of their own; release_all frees
// with the real free.
#include <cstdlib>

#include "memory/small_block_cache.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::memory::SmallBlockCache;

namespace {
void* block(std::size_t n) { return (std::malloc)(SmallBlockCache::block_size(n)); }
}  // namespace

TEST_GROUP(SmallBlockCache) {
  SmallBlockCache cache;
  void teardown() override { cache.release_all(); }
};

TEST(SmallBlockCache, SizesAreTheUsableSizesOfMallocChunks) {
  // glibc: chunks of 32, 48, 64, ... octets, 8 of them header, so
  // malloc(n) has these usable sizes anyway. (Not read back from
  // malloc_usable_size here: CppUTest's allocator stands in for malloc.)
  LONGS_EQUAL(24, SmallBlockCache::block_size(0));
  LONGS_EQUAL(24, SmallBlockCache::block_size(1));
  LONGS_EQUAL(24, SmallBlockCache::block_size(24));
  LONGS_EQUAL(40, SmallBlockCache::block_size(25));
  LONGS_EQUAL(40, SmallBlockCache::block_size(40));
  LONGS_EQUAL(56, SmallBlockCache::block_size(41));
  LONGS_EQUAL(520, SmallBlockCache::block_size(SmallBlockCache::largest));
}

TEST(SmallBlockCache, AnEmptyClassGivesNothing) { POINTERS_EQUAL(nullptr, cache.take(40)); }

TEST(SmallBlockCache, AKeptBlockIsTakenAgainForAnySizeOfItsClass) {
  void* p = block(40);
  CHECK_TRUE(cache.keep(p, 40));
  LONGS_EQUAL(40, cache.cached_bytes());
  POINTERS_EQUAL(nullptr, cache.take(41));  // the next class up has none
  POINTERS_EQUAL(p, cache.take(25));        // 25..40 share the class
  LONGS_EQUAL(0, cache.cached_bytes());
  (std::free)(p);
}

TEST(SmallBlockCache, TheLastKeptIsTakenFirst) {
  // Last freed, first reused: the block most likely still in the CPU cache.
  void* a = block(100);
  void* b = block(100);
  CHECK_TRUE(cache.keep(a, 100));
  CHECK_TRUE(cache.keep(b, 100));
  POINTERS_EQUAL(b, cache.take(100));
  POINTERS_EQUAL(a, cache.take(100));
  POINTERS_EQUAL(nullptr, cache.take(100));
  (std::free)(a);
  (std::free)(b);
}

TEST(SmallBlockCache, ItHoldsNoMoreThanItsByteBound) {
  const std::size_t n = SmallBlockCache::largest;
  std::size_t kept = 0;
  for (;;) {
    void* p = block(n);
    if (!cache.keep(p, n)) {  // full: the caller frees it
      (std::free)(p);
      break;
    }
    ++kept;
    CHECK_TRUE(kept <= SmallBlockCache::max_cached_bytes / SmallBlockCache::block_size(n));
  }
  LONGS_EQUAL(SmallBlockCache::max_cached_bytes / SmallBlockCache::block_size(n), kept);
  CHECK_TRUE(cache.cached_bytes() <= SmallBlockCache::max_cached_bytes);
  CHECK_TRUE(cache.cached_bytes() + SmallBlockCache::block_size(n) > SmallBlockCache::max_cached_bytes);
}

TEST(SmallBlockCache, ReleaseAllFreesEveryClass) {
  for (std::size_t n : {8, 24, 200, 512}) CHECK_TRUE(cache.keep(block(n), n));
  cache.release_all();
  LONGS_EQUAL(0, cache.cached_bytes());
  for (std::size_t n : {8, 24, 200, 512}) POINTERS_EQUAL(nullptr, cache.take(n));
}
