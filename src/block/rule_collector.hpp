#pragma once
// Collects the rules of a table's lists as the parser streams them, then
// makes the table. What it holds while collecting is the table-to-be's
// entries (12 octets a rule) in chunks of 768 KiB, mapped from the kernel
// (block/mapped_array.hpp): no vector that doubles (and so briefly needs
// three times its size) and nothing per name. finish() copies each class
// into one array of its exact size, releasing chunks as it goes, so the
// peak of a build is about the finished table plus one chunk.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "block/block_table.hpp"
#include "block/mapped_array.hpp"
#include "block/rule.hpp"
#include "block/rule_index.hpp"

namespace nxdns::block {

// A growing sequence of entries in fixed chunks.
class EntryChunks {
 public:
  static constexpr std::size_t chunk_entries = 65536;

  void push(const IndexEntry& e) {
    if (fill_ == chunk_entries) {
      chunks_.emplace_back(chunk_entries);
      fill_ = 0;
    }
    chunks_.back()[fill_++] = e;
  }
  std::size_t size() const { return chunks_.empty() ? 0 : (chunks_.size() - 1) * chunk_entries + fill_; }
  // Every entry in one array; this is empty afterwards.
  MappedArray<IndexEntry> gather();

 private:
  std::vector<MappedArray<IndexEntry>> chunks_;
  std::size_t fill_ = chunk_entries;  // entries in chunks_.back()
};

class RuleCollector {
 public:
  // Starts the next list and returns the index its rules are added under;
  // nullopt when the table already has max_lists lists.
  std::optional<std::uint8_t> begin_list(std::string name, bool allow_list);
  // `rule.name` must be what block/list_parser gives: valid, lower case.
  void add(std::uint8_t list, const Rule& rule);
  void end_list(std::uint8_t list, const ParseCounts& counts);
  std::size_t rules() const;
  // Makes the table; the collector is empty afterwards.
  BlockTable finish();

 private:
  EntryChunks& chunks(RuleKind kind, bool allow);

  std::vector<ListInfo> lists_;
  EntryChunks exact_block_;
  EntryChunks subtree_block_;
  EntryChunks exact_allow_;
  EntryChunks subtree_allow_;
};

}  // namespace nxdns::block
