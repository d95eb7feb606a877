#include "cache/answer_store.hpp"

namespace nxdns::cache {

namespace {
// glibc malloc: an 8-byte chunk header, sizes rounded up to 16.
constexpr std::size_t malloc_block(std::size_t n) { return (n + 8 + 15) / 16 * 16; }
// libstdc++ std::string keeps up to 15 characters inline.
constexpr std::size_t inline_string_chars = 15;
}  // namespace

const char* describe(Eviction e) { return e == Eviction::lru ? "lru" : "sieve"; }

std::size_t AnswerStore::cost(const Key& k, const dns::Bytes& answer) {
  const auto layout = layout_of(answer);
  return cost(k, answer, layout ? *layout : AnswerLayout{});
}

std::size_t AnswerStore::cost(const Key& k, const dns::Bytes& answer, const AnswerLayout& layout) {
  // Its capacity, not its size: layout_of reserves one slot per record and
  // the OPT takes none, so shrinking it would cost a reallocation per store.
  const std::size_t ttl_heap =
      layout.ttl_at.capacity() == 0 ? 0 : malloc_block(layout.ttl_at.capacity() * sizeof(std::uint16_t));
  // The client form is found on the first hit (find_client_form); its
  // options' block is charged from the start, at the upstream OPT's bound.
  const std::size_t options_heap = layout.opt_options ? malloc_block(layout.opt_options) : 0;
  const std::size_t list_node = malloc_block(sizeof(Node) + 2 * sizeof(void*));
  // next pointer, the pair, the cached hash.
  const std::size_t hash_node =
      malloc_block(sizeof(void*) + sizeof(std::pair<const std::string_view, List::iterator>) + sizeof(std::size_t));
  const std::size_t key_heap = k.packed.size() > inline_string_chars ? malloc_block(k.packed.size() + 1) : 0;
  return list_node + hash_node + key_heap + malloc_block(answer.size()) + ttl_heap + options_heap;
}

AnswerStore::AnswerStore(std::size_t max_bytes, Eviction policy)
    : max_bytes_(max_bytes), policy_(policy), hand_(order_.end()) {}

StoredAnswer* AnswerStore::find(std::string_view packed) {
  auto it = index_.find(packed);
  if (it == index_.end()) return nullptr;
  List::iterator node = it->second;
  if (policy_ == Eviction::lru) {
    order_.splice(order_.begin(), order_, node);
  } else {
    node->visited = true;
  }
  return &node->value;
}

bool AnswerStore::put(Key k, dns::Bytes answer, EntryAge age, bool negative) {
  auto layout = layout_of(answer);
  if (!layout) {
    erase(k);
    return false;
  }
  return put(std::move(k), std::move(answer), std::move(*layout), age, negative);
}

bool AnswerStore::put(Key k, dns::Bytes answer, AnswerLayout layout, EntryAge age, bool negative) {
  erase(k);
  answer.shrink_to_fit();
  const std::size_t c = cost(k, answer, layout);
  if (c > max_bytes_) return false;
  while (bytes() + c > max_bytes_ && !order_.empty()) remove(victim());
  order_.push_front(
      Node{std::move(k), StoredAnswer{std::move(answer), std::move(layout), age, negative, std::nullopt}, c, false});
  index_.emplace(order_.front().key.packed, order_.begin());
  bytes_ += c;
  ++changes_;
  // The insert may have grown the bucket array past the bound. The new
  // entry is the list's front for as long as it is there.
  bool stored = true;
  while (bytes() > max_bytes_ && order_.size() > 1) {
    const List::iterator v = victim();
    if (v == order_.begin()) stored = false;
    remove(v);
  }
  return stored;
}

void AnswerStore::set_max_bytes(std::size_t max_bytes) {
  max_bytes_ = max_bytes;
  while (bytes() > max_bytes_ && !order_.empty()) remove(victim());
}

void AnswerStore::remove(List::iterator it) {
  if (it == hand_) hand_ = it == order_.begin() ? order_.end() : std::prev(it);
  bytes_ -= it->cost;
  ++changes_;
  index_.erase(it->key.packed);
  order_.erase(it);
}

AnswerStore::List::iterator AnswerStore::victim() {
  ++evictions_;
  if (policy_ == Eviction::lru) return std::prev(order_.end());
  // SIEVE: the hand walks from the oldest entry towards the newest, clearing
  // visited marks, and evicts the first unvisited one; it wraps to the oldest.
  // Terminates: one full lap clears every mark.
  List::iterator h = hand_ == order_.end() ? std::prev(order_.end()) : hand_;
  while (h->visited) {
    h->visited = false;
    h = h == order_.begin() ? std::prev(order_.end()) : std::prev(h);
  }
  hand_ = h;
  return h;
}

void AnswerStore::erase(const Key& k) {
  auto it = index_.find(k.packed);
  if (it != index_.end()) remove(it->second);
}

std::size_t AnswerStore::erase_name(const std::string& folded_name) {
  std::size_t n = 0;
  for (auto it = order_.begin(); it != order_.end();) {
    auto next = std::next(it);
    if (key_has_name(it->key, folded_name)) {
      remove(it);
      ++n;
    }
    it = next;
  }
  return n;
}

std::size_t AnswerStore::clear() {
  const std::size_t n = index_.size();
  changes_ += n;
  index_.clear();
  order_.clear();
  hand_ = order_.end();
  bytes_ = 0;
  return n;
}

}  // namespace nxdns::cache
