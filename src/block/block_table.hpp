#pragma once
// The blocklists as one immutable table, and the decision for a name.
//
// The decision, for a query name N:
//   allowed     an allow rule covers N: an exact allow for N itself, or a
//               subtree allow for N or any parent of N. Allow wins over
//               every block rule, whatever their depth: `@@||example.com^`
//               allows ads.example.com even where ads.example.com is
//               blocked, and `@@||cdn.ads.com^` allows cdn.ads.com under a
//               blocked `||ads.com^` (which still blocks x.ads.com).
//   blocked     no allow rule covers N, and an exact block for N or a
//               subtree block for N or a parent of N exists.
//   not_listed  otherwise.
// With the decision comes the rule behind it: its list, its line, exact or
// subtree, and the matched suffix of N (where the rule's name starts in
// N's wire form). Rule names themselves are not kept (block/rule_index.hpp):
// the matched suffix IS the rule's name, read from the query.
//
// A lookup hashes N's suffixes in one pass (block/name_hash.hpp) and
// searches only the classes that hold rules; nothing is allocated. Built
// by block/rule_collector, off the event loop (block/table_builder), and
// never changed afterwards, so the loop reads it without a lock while the
// next one is built.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "block/list_parser.hpp"
#include "block/rule.hpp"
#include "block/rule_index.hpp"
#include "dns/message.hpp"

namespace nxdns::block {

enum class Verdict : std::uint8_t { not_listed, blocked, allowed };
const char* describe(Verdict v);

struct Decision {
  Verdict verdict = Verdict::not_listed;
  // The rule that decided (meaningless when not_listed).
  RuleKind kind = RuleKind::exact;
  std::uint8_t list = 0;           // index into BlockTable::lists()
  std::uint8_t suffix_offset = 0;  // the rule's name is the query's wire name from this octet on
  std::uint32_t line = 0;          // 0: beyond line 16,777,215 (block/rule_index.hpp)
};

struct ListInfo {
  std::string name;  // its path or URL, as the operator wrote it
  bool allow_list = false;
  ParseCounts counts;
};

struct Explanation {
  Decision decision;
  // Every rule that covers the name (verdict allowed or blocked on each):
  // allow rules, then block rules; each exact first, then subtree from the
  // name itself up to its top-level domain.
  std::vector<Decision> matches;
};

class BlockTable {
 public:
  // Blocks nothing: the table in use before any list was loaded.
  BlockTable() = default;
  BlockTable(std::vector<ListInfo> lists, RuleIndex exact_block, RuleIndex subtree_block, RuleIndex exact_allow,
             RuleIndex subtree_allow);

  // `wire_name`: uncompressed wire form, any case (a parsed question's
  // name). A malformed name is not_listed.
  Decision decide(dns::ByteView wire_name) const noexcept;
  Explanation explain(dns::ByteView wire_name) const;
  // One paragraph for `nxdns why`: the verdict, the rule, its list and
  // line, and the rules it overrode.
  std::string why(dns::ByteView wire_name) const;
  // The same for a presentation name, any case, trailing dot optional
  // ("Ads.Example.com"), as `nxdns why` is given it: a name that is not
  // one (an empty label, a label over 63 octets) is not_listed, and why
  // says so.
  Decision decide_text(std::string_view name) const;
  std::string why_text(std::string_view name) const;

  const std::vector<ListInfo>& lists() const { return lists_; }
  // Distinct rules of one class (a name in two lists counts once).
  std::size_t rules(RuleKind kind, bool allow) const;
  std::size_t rules() const;
  // The mapped arrays and the list descriptions.
  std::size_t memory_bytes() const;

 private:
  const RuleIndex& index(RuleKind kind, bool allow) const;

  std::vector<ListInfo> lists_;
  RuleIndex exact_block_;
  RuleIndex subtree_block_;
  RuleIndex exact_allow_;
  RuleIndex subtree_allow_;
};

}  // namespace nxdns::block
