#include "block/rule_collector.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "block/name_hash.hpp"

namespace nxdns::block {

MappedArray<IndexEntry> EntryChunks::gather() {
  MappedArray<IndexEntry> out(size());
  std::size_t at = 0;
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    const std::size_t n = c + 1 == chunks_.size() ? fill_ : chunk_entries;
    std::memcpy(out.data() + at, chunks_[c].data(), n * sizeof(IndexEntry));
    at += n;
    chunks_[c].reset();
  }
  chunks_.clear();
  fill_ = chunk_entries;
  return out;
}

std::optional<std::uint8_t> RuleCollector::begin_list(std::string name, bool allow_list) {
  if (lists_.size() >= max_lists) return std::nullopt;
  lists_.push_back(ListInfo{std::move(name), allow_list, {}});
  return static_cast<std::uint8_t>(lists_.size() - 1);
}

void RuleCollector::add(std::uint8_t list, const Rule& rule) {
  chunks(rule.kind, rule.allow).push(IndexEntry::make(name_hash(rule.name), pack_origin(list, rule.line)));
}

void RuleCollector::end_list(std::uint8_t list, const ParseCounts& counts) {
  if (list < lists_.size()) lists_[list].counts = counts;
}

std::size_t RuleCollector::rules() const {
  return exact_block_.size() + subtree_block_.size() + exact_allow_.size() + subtree_allow_.size();
}

BlockTable RuleCollector::finish() {
  // One class at a time: while one is sorted, the others are still chunks.
  RuleIndex exact_block(exact_block_.gather());
  RuleIndex subtree_block(subtree_block_.gather());
  RuleIndex exact_allow(exact_allow_.gather());
  RuleIndex subtree_allow(subtree_allow_.gather());
  std::vector<ListInfo> lists = std::move(lists_);
  lists_.clear();
  return BlockTable(std::move(lists), std::move(exact_block), std::move(subtree_block), std::move(exact_allow),
                    std::move(subtree_allow));
}

EntryChunks& RuleCollector::chunks(RuleKind kind, bool allow) {
  if (allow) return kind == RuleKind::exact ? exact_allow_ : subtree_allow_;
  return kind == RuleKind::exact ? exact_block_ : subtree_block_;
}

}  // namespace nxdns::block
