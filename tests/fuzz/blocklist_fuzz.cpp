// libFuzzer target for a blocklist as the loader reads it: block::ListParser
// fed in chunks, then the table made of what it gave.
//
// Input: the first octet picks the chunk size (1 to 256 octets, as reads
// and fetched bodies split a list anywhere) and whether the list is an
// allowlist; the rest is the list.
// Invariants checked: nothing crashes or reads out of bounds (ASan/UBSan);
// the same text in one piece gives the same rules and counts; every rule's
// name is a valid lower-case DNS name; lines are counted once each; and
// the table decides every rule's own name as that rule says (allowed
// when an allow rule covers it, otherwise blocked), its wire form in upper
// case included.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "block/block_table.hpp"
#include "block/list_parser.hpp"
#include "block/rule_collector.hpp"
#include "dns/message.hpp"

using namespace nxdns;
using namespace nxdns::block;

namespace {

bool valid_rule_name(std::string_view n) {
  if (n.empty() || n.size() > 253 || n.front() == '.' || n.back() == '.') return false;
  std::size_t label = 0;
  for (const char c : n) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok || ++label > 63) return false;
  }
  return label > 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t chunk = static_cast<std::size_t>(data[0] & 0x7F) * 2 + 1;
  const ParseOptions opts{(data[0] & 0x80) != 0};
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  std::vector<OwnedRule> rules;
  ListParser p([&](const Rule& r) { rules.push_back({std::string(r.name), r.kind, r.allow, r.line}); }, opts);
  for (std::size_t i = 0; i < text.size(); i += chunk) p.feed(text.substr(i, chunk));
  p.finish();

  const ParsedList whole = parse_list(text, opts);
  if (whole.rules != rules || whole.counts.skipped != p.counts().skipped || whole.counts.lines != p.counts().lines ||
      whole.counts.rules != rules.size())
    std::abort();
  std::uint64_t newlines = 0;
  for (const char c : text) newlines += c == '\n';
  const bool unterminated = !text.empty() && text.back() != '\n';
  if (p.counts().lines != newlines + (unterminated ? 1 : 0)) std::abort();
  for (const OwnedRule& r : rules) {
    if (!valid_rule_name(r.name) || r.line == 0 || r.line > p.counts().lines) std::abort();
    if (opts.allow_list && !r.allow) std::abort();
  }

  RuleCollector c;
  const std::uint8_t list = *c.begin_list("fuzz", opts.allow_list);
  for (const OwnedRule& r : rules) c.add(list, Rule{r.name, r.kind, r.allow, r.line});
  const BlockTable t = c.finish();
  for (const OwnedRule& r : rules) {
    std::string upper = r.name;
    for (char& ch : upper) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - ('a' - 'A') : ch);
    const auto wire = dns::name_from_text(upper);
    if (!wire) std::abort();
    const Decision d = t.decide(*wire);
    if (d.verdict == Verdict::not_listed) std::abort();
    if (r.allow && d.verdict != Verdict::allowed) std::abort();
    if (t.explain(*wire).matches.empty()) std::abort();
  }
  return 0;
}
