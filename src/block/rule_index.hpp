#pragma once
// One class of rules of a table (exact blocks, subtree blocks, exact
// allows or subtree allows), searchable by name hash: a sorted array of
// 12-octet entries and a bucket array over the hashes' top bits.
//
// No node and no string per name: a million rules are 12 MiB of entries
// plus 0.5 MiB of buckets. A search reads one bucket bound (two adjacent
// 32-bit words) and then ~8 entries (about 100 octets, two cache lines):
// two memory accesses where a plain binary search over 12 MiB would make
// ~10 cache misses.
#include <cstddef>
#include <cstdint>

#include "block/mapped_array.hpp"

namespace nxdns::block {

// Where a rule was written: list index (8 bits) and line (24 bits) in one
// word, so an entry stays 12 octets. A table holds at most 256 lists;
// a line past 16,777,215 is kept as 0 ("beyond line 16,777,215"), which no
// list a household uses reaches (30 MB lists have ~1 M lines).
inline constexpr std::size_t max_lists = 256;
inline constexpr std::uint32_t max_origin_line = (std::uint32_t{1} << 24) - 1;
inline std::uint32_t pack_origin(std::uint8_t list, std::uint32_t line) {
  return (std::uint32_t{list} << 24) | (line > max_origin_line ? 0 : line);
}
inline std::uint8_t origin_list(std::uint32_t origin) { return static_cast<std::uint8_t>(origin >> 24); }
inline std::uint32_t origin_line(std::uint32_t origin) { return origin & max_origin_line; }

struct IndexEntry {
  // The hash in two halves: a 64-bit member would pad the entry to 16.
  std::uint32_t hi = 0;
  std::uint32_t lo = 0;
  std::uint32_t origin = 0;

  static IndexEntry make(std::uint64_t hash, std::uint32_t origin) {
    return {static_cast<std::uint32_t>(hash >> 32), static_cast<std::uint32_t>(hash), origin};
  }
  std::uint64_t hash() const { return (std::uint64_t{hi} << 32) | lo; }
};
static_assert(sizeof(IndexEntry) == 12);

class RuleIndex {
 public:
  RuleIndex() = default;
  // Sorts the entries, keeps one per hash (the lowest origin: the first
  // list, then its first line, which is what `nxdns why` reports), gives
  // back the pages the duplicates held and builds the buckets.
  explicit RuleIndex(MappedArray<IndexEntry> entries);

  const IndexEntry* find(std::uint64_t hash) const noexcept;
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  std::size_t memory_bytes() const noexcept { return entries_.mapped_bytes() + buckets_.mapped_bytes(); }

 private:
  MappedArray<IndexEntry> entries_;
  // buckets_[k] is the first entry whose hash's top bits_ bits are >= k;
  // 2^bits_ + 1 of them, so bucket k is [buckets_[k], buckets_[k + 1]).
  MappedArray<std::uint32_t> buckets_;
  unsigned bits_ = 0;
};

}  // namespace nxdns::block
