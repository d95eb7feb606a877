#include "memory/small_block_cache.hpp"

#include <cstdlib>
#include <new>

namespace nxdns::memory {

void* SmallBlockCache::take(std::size_t n) noexcept {
  Free*& head = heads_[class_of(n)];
  Free* b = head;
  if (b == nullptr) return nullptr;
  head = b->next;
  bytes_ -= block_size(n);
  return b;
}

bool SmallBlockCache::keep(void* p, std::size_t n) noexcept {
  const std::size_t size = block_size(n);
  if (bytes_ + size > max_cached_bytes) return false;
  Free*& head = heads_[class_of(n)];
  // The smallest block is 24 octets: room for the link.
  head = new (p) Free{head};
  bytes_ += size;
  return true;
}

void SmallBlockCache::release_all() noexcept {
  for (Free*& head : heads_) {
    while (head != nullptr) {
      Free* next = head->next;
      std::free(head);
      head = next;
    }
  }
  bytes_ = 0;
}

}  // namespace nxdns::memory
