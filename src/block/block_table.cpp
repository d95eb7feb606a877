#include "block/block_table.hpp"

#include <optional>
#include <utility>

#include "block/name_hash.hpp"
#include "log/log.hpp"

namespace nxdns::block {

namespace {

// A wire name's suffixes: for i in [0, count), the name from octet
// offset[i] on (offset[0] = 0: the name itself; the last one is its
// top-level domain) and that suffix's hash. The root is not a suffix: no
// rule can name it.
struct Suffixes {
  static constexpr std::size_t max_labels = 127;  // 255 octets of 1-octet labels and their lengths
  std::uint64_t hash[max_labels];
  std::uint8_t offset[max_labels];
  std::size_t count = 0;

  // False for a name that is not one well-formed uncompressed wire name.
  bool read(dns::ByteView wire) noexcept {
    char lower[dns::max_name_wire];
    std::size_t at = 0;
    for (;;) {
      if (at >= wire.size() || at >= dns::max_name_wire) return false;
      const std::uint8_t len = wire[at];
      if (len == 0) break;
      // The label and the root after it must fit the 255 octets of a name.
      if (len > 63 || at + 1 + len > wire.size() || at + 1 + len >= dns::max_name_wire || count == max_labels)
        return false;
      offset[count++] = static_cast<std::uint8_t>(at);
      for (std::size_t i = at + 1; i <= at + len; ++i) {
        const std::uint8_t c = wire[i];
        lower[i] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
      }
      at += 1 + len;
    }
    std::uint64_t h = root_hash;
    for (std::size_t i = count; i-- > 0;) {
      h = extend_hash(h, lower + offset[i] + 1, wire[offset[i]]);
      hash[i] = h;
    }
    return true;
  }
};

Decision match_of(Verdict v, RuleKind kind, const IndexEntry& e, std::uint8_t offset) {
  return Decision{v, kind, origin_list(e.origin), offset, origin_line(e.origin)};
}

std::string rule_text(const Decision& d, dns::ByteView wire, const std::vector<ListInfo>& lists) {
  // The rule's name is the matched suffix, as a list wrote it: lower case.
  std::string name = dns::name_to_text(wire.subspan(d.suffix_offset));
  if (name.size() > 1 && name.back() == '.') name.pop_back();
  for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
  const std::string what = d.kind == RuleKind::exact ? log::cat(name, " (that name only)")
                                                     : log::cat(name, " (and every name below it)");
  const std::string list = d.list < lists.size() ? log::cat("list ", int{d.list}, " ", lists[d.list].name)
                                                 : log::cat("list ", int{d.list});
  const std::string line = d.line == 0 ? std::string("a line past 16777215") : log::cat("line ", d.line);
  return log::cat(d.verdict == Verdict::allowed ? "allow " : "block ", what, ", ", list, ", ", line);
}

}  // namespace

const char* describe(Verdict v) {
  switch (v) {
    case Verdict::not_listed: return "not_listed";
    case Verdict::blocked: return "blocked";
    case Verdict::allowed: return "allowed";
  }
  return "unknown";
}

BlockTable::BlockTable(std::vector<ListInfo> lists, RuleIndex exact_block, RuleIndex subtree_block,
                       RuleIndex exact_allow, RuleIndex subtree_allow)
    : lists_(std::move(lists)), exact_block_(std::move(exact_block)), subtree_block_(std::move(subtree_block)),
      exact_allow_(std::move(exact_allow)), subtree_allow_(std::move(subtree_allow)) {}

Decision BlockTable::decide(dns::ByteView wire_name) const noexcept {
  if (rules() == 0) return {};
  Suffixes s;
  if (!s.read(wire_name) || s.count == 0) return {};
  if (!exact_allow_.empty() || !subtree_allow_.empty()) {
    if (const IndexEntry* e = exact_allow_.find(s.hash[0])) return match_of(Verdict::allowed, RuleKind::exact, *e, 0);
    if (!subtree_allow_.empty()) {
      for (std::size_t i = 0; i < s.count; ++i) {
        if (const IndexEntry* e = subtree_allow_.find(s.hash[i]))
          return match_of(Verdict::allowed, RuleKind::subtree, *e, s.offset[i]);
      }
    }
  }
  if (const IndexEntry* e = exact_block_.find(s.hash[0])) return match_of(Verdict::blocked, RuleKind::exact, *e, 0);
  if (!subtree_block_.empty()) {
    for (std::size_t i = 0; i < s.count; ++i) {
      if (const IndexEntry* e = subtree_block_.find(s.hash[i]))
        return match_of(Verdict::blocked, RuleKind::subtree, *e, s.offset[i]);
    }
  }
  return {};
}

Explanation BlockTable::explain(dns::ByteView wire_name) const {
  Explanation out;
  out.decision = decide(wire_name);
  Suffixes s;
  if (!s.read(wire_name)) return out;
  for (const bool allow : {true, false}) {
    const Verdict v = allow ? Verdict::allowed : Verdict::blocked;
    if (s.count > 0) {
      if (const IndexEntry* e = index(RuleKind::exact, allow).find(s.hash[0]))
        out.matches.push_back(match_of(v, RuleKind::exact, *e, 0));
    }
    for (std::size_t i = 0; i < s.count; ++i) {
      if (const IndexEntry* e = index(RuleKind::subtree, allow).find(s.hash[i]))
        out.matches.push_back(match_of(v, RuleKind::subtree, *e, s.offset[i]));
    }
  }
  return out;
}

std::string BlockTable::why(dns::ByteView wire_name) const {
  const Explanation x = explain(wire_name);
  const std::string name = dns::name_to_text(wire_name);
  if (x.decision.verdict == Verdict::not_listed) {
    return log::cat(name, " is not listed: no rule of ", lists_.size(), lists_.size() == 1 ? " list (" : " lists (",
                    rules(), rules() == 1 ? " rule) covers it" : " rules) covers it");
  }
  std::string out = log::cat(name, " is ", describe(x.decision.verdict), " by ",
                             rule_text(x.decision, wire_name, lists_));
  for (const Decision& m : x.matches) {
    if (m.verdict == Verdict::blocked && x.decision.verdict == Verdict::allowed) {
      out += log::cat("; allow rules win over ", rule_text(m, wire_name, lists_));
    }
  }
  return out;
}

Decision BlockTable::decide_text(std::string_view name) const {
  const std::optional<dns::Bytes> wire = dns::name_from_text(name);
  return wire ? decide(*wire) : Decision{};
}

std::string BlockTable::why_text(std::string_view name) const {
  const std::optional<dns::Bytes> wire = dns::name_from_text(name);
  return wire ? why(*wire) : log::cat("\"", name, "\" is not a DNS name");
}

const RuleIndex& BlockTable::index(RuleKind kind, bool allow) const {
  if (allow) return kind == RuleKind::exact ? exact_allow_ : subtree_allow_;
  return kind == RuleKind::exact ? exact_block_ : subtree_block_;
}

std::size_t BlockTable::rules(RuleKind kind, bool allow) const { return index(kind, allow).size(); }

std::size_t BlockTable::rules() const {
  return exact_block_.size() + subtree_block_.size() + exact_allow_.size() + subtree_allow_.size();
}

std::size_t BlockTable::memory_bytes() const {
  std::size_t n = exact_block_.memory_bytes() + subtree_block_.memory_bytes() + exact_allow_.memory_bytes() +
                  subtree_allow_.memory_bytes() + lists_.capacity() * sizeof(ListInfo);
  for (const ListInfo& l : lists_) n += l.name.capacity();
  return n;
}

}  // namespace nxdns::block
