#pragma once
// The byte-bounded table of cached answers. Owned by the loop (no locks).
//
// Bytes are counted honestly: every entry is charged its answer buffer, its
// key's heap block (none for a key short enough for the string's inline
// buffer), the list and hash nodes, their allocator headers and its share of
// the bucket array. bench/cache_replay.cpp measures the policies on the
// household trace; bench/cache_bench.sh compares the count with the RSS.
#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cache/answer_rewrite.hpp"
#include "cache/key.hpp"
#include "cache/policy.hpp"
#include "dns/message.hpp"
#include "loop/scheduler.hpp"

namespace nxdns::cache {

// LRU moves an entry to the front on every hit; SIEVE (Zhang et al., NSDI
// 2024) only marks it, and its hand evicts the oldest unmarked entry. On the
// household trace their hit ratios are close wherever the cache evicts, and
// equal at the default max_bytes, which holds the whole working set
// (bench/cache.md, bench/cache_replay.sh). SIEVE is the default: a hit
// writes one flag instead of relinking the list.
enum class Eviction : std::uint8_t { lru, sieve };
const char* describe(Eviction e);

struct StoredAnswer {
  dns::Bytes answer;  // the upstream's answer as validated, with its ID and question case
  AnswerLayout layout;  // layout_of(answer), found once when stored; its client form on the first hit
  EntryAge age;
  bool negative = false;
  // When a refresh of this entry, stale, last failed: it opens the failure
  // recheck window (refresh_state_on_arrival). Part of the entry, so it is
  // bounded and evicted with it, and a stored refresh (a new entry) clears it.
  std::optional<loop::TimePoint> refresh_failed_at;
};

class AnswerStore {
 public:
  AnswerStore(std::size_t max_bytes, Eviction policy);
  AnswerStore(const AnswerStore&) = delete;
  AnswerStore& operator=(const AnswerStore&) = delete;

  // The entry, marked as used (LRU: moved to the front; SIEVE: visited), or
  // nullptr. The pointer is valid until the next put/erase/clear.
  StoredAnswer* find(const Key& k) { return find(std::string_view(k.packed)); }
  // The same by a packed key anywhere (KeyBuffer: no heap block per lookup).
  StoredAnswer* find(std::string_view packed);
  // Replaces any entry under `k`. Evicts until the new entry fits; an answer
  // larger than the whole budget, or one that does not walk (layout_of), is
  // not stored. Returns whether it was stored.
  bool put(Key k, dns::Bytes answer, EntryAge age, bool negative);
  // The same with `layout` = layout_of(answer) found by the caller (no
  // walk here).
  bool put(Key k, dns::Bytes answer, AnswerLayout layout, EntryAge age, bool negative);
  void erase(const Key& k);
  // Operator flush: every entry under this folded name (all types, classes,
  // DO/CD), or everything. Returns how many entries went.
  std::size_t erase_name(const std::string& folded_name);
  std::size_t clear();
  // Reload: a new byte bound. Shrinking evicts (by the usual policy) down
  // to it; growing evicts nothing. Nothing else is flushed.
  void set_max_bytes(std::size_t max_bytes);

  std::size_t entries() const { return index_.size(); }
  // Entries' costs plus the hash table's bucket array.
  std::size_t bytes() const { return bytes_ + index_.bucket_count() * sizeof(void*); }
  std::size_t max_bytes() const { return max_bytes_; }
  std::uint64_t evictions() const { return evictions_; }
  // Entries stored plus entries removed (evicted, expired, flushed), ever:
  // how far a saved copy (cache/persistence.hpp) may be behind the store.
  std::uint64_t changes() const { return changes_; }

  // Every entry, from the one that has been here longest to the newest (the
  // list's order: LRU's least recently used first), without marking any as
  // used. Putting them back in this order rebuilds the same order.
  template <class F>
  void for_each_oldest_first(F&& f) const {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) f(std::string_view(it->key.packed), it->value);
  }

  // What one entry costs against max_bytes (its layout's TTL offsets included).
  static std::size_t cost(const Key& k, const dns::Bytes& answer);
  static std::size_t cost(const Key& k, const dns::Bytes& answer, const AnswerLayout& layout);

 private:
  struct Node {
    Key key;
    StoredAnswer value;
    std::size_t cost = 0;
    bool visited = false;  // SIEVE
  };
  using List = std::list<Node>;

  // The entry to evict next (counted as evicted; the caller removes it).
  // Precondition: not empty.
  List::iterator victim();
  void remove(List::iterator it);

  std::size_t max_bytes_;
  Eviction policy_;
  List order_;  // front = newest insertion (SIEVE) / most recently used (LRU)
  // Keys view the node's own string: one copy of each key.
  std::unordered_map<std::string_view, List::iterator> index_;
  List::iterator hand_;  // SIEVE; order_.end() = start from the oldest
  std::size_t bytes_ = 0;
  std::uint64_t evictions_ = 0;
  std::uint64_t changes_ = 0;
};

}  // namespace nxdns::cache
