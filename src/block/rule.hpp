#pragma once
// One blocklist rule as the list parser gives it and the table stores it:
// a name, whether it covers only that name or its whole subtree, and
// whether it blocks or allows. Shared by block/list_parser (which makes
// rules) and block/rule_collector (which turns them into a table).
#include <cstdint>
#include <string_view>

namespace nxdns::block {

enum class RuleKind : std::uint8_t {
  exact,    // the name only (a hosts line: hosts files map one name to one address)
  subtree,  // the name and every name below it (a domain line, `||name^`)
};
const char* describe(RuleKind k);

struct Rule {
  // Lower case presentation form without the trailing dot, a valid DNS
  // name (block/list_parser.hpp says which). Valid only during the call
  // that hands the rule over: the parser reuses its buffer.
  std::string_view name;
  RuleKind kind = RuleKind::exact;
  bool allow = false;
  std::uint32_t line = 0;  // 1-based line of the list it was written on
};

}  // namespace nxdns::block
