#include "block/rule_index.hpp"

#include <algorithm>
#include <bit>
#include <utility>

namespace nxdns::block {

namespace {

bool hash_less(const IndexEntry& a, const IndexEntry& b) {
  return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
}

// ~4 to 8 entries per bucket: a bucket's entries fit two cache lines, and
// the bucket array costs at most one 32-bit word per 4 entries.
unsigned bucket_bits(std::size_t n) {
  if (n < 16) return 0;
  return static_cast<unsigned>(std::bit_width(n) - 1) - 2;
}

}  // namespace

RuleIndex::RuleIndex(MappedArray<IndexEntry> entries) : entries_(std::move(entries)) {
  // Equal hashes end up adjacent with the lowest origin first, and unique
  // keeps the first of each run.
  std::sort(entries_.begin(), entries_.end(), [](const IndexEntry& a, const IndexEntry& b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo != b.lo ? a.lo < b.lo : a.origin < b.origin;
  });
  const IndexEntry* end = std::unique(entries_.begin(), entries_.end(), [](const IndexEntry& a, const IndexEntry& b) {
    return a.hi == b.hi && a.lo == b.lo;
  });
  entries_.shrink(static_cast<std::size_t>(end - entries_.begin()));
  if (entries_.empty()) return;

  bits_ = bucket_bits(entries_.size());
  const std::size_t buckets = std::size_t{1} << bits_;
  buckets_ = MappedArray<std::uint32_t>(buckets + 1);
  std::size_t e = 0;
  for (std::size_t k = 0; k < buckets; ++k) {
    while (e < entries_.size() && bits_ != 0 && (entries_[e].hash() >> (64 - bits_)) < k) ++e;
    buckets_[k] = static_cast<std::uint32_t>(e);
  }
  buckets_[buckets] = static_cast<std::uint32_t>(entries_.size());
}

const IndexEntry* RuleIndex::find(std::uint64_t hash) const noexcept {
  if (entries_.empty()) return nullptr;
  const std::size_t k = bits_ == 0 ? 0 : static_cast<std::size_t>(hash >> (64 - bits_));
  const IndexEntry* first = entries_.data() + buckets_[k];
  const IndexEntry* last = entries_.data() + buckets_[k + 1];
  const IndexEntry key = IndexEntry::make(hash, 0);
  const IndexEntry* it = std::lower_bound(first, last, key, hash_less);
  return it != last && it->hi == key.hi && it->lo == key.lo ? it : nullptr;
}

}  // namespace nxdns::block
