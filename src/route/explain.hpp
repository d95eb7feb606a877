#pragma once
// A route in words, for `nxdns why` and GET /api/why: which rule decided
// it (a record and where it was written, a zone and why it exists, the LAN
// servers asked) and what the client gets.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "route/local_records.hpp"
#include "route/route_decision.hpp"
#include "route/route_table.hpp"

namespace nxdns::route {

struct Explanation {
  std::string route;    // describe(RouteKind)
  std::string answer;   // what the client gets, in a few words
  std::string zone;     // the deciding zone, "" when none
  std::string source;   // where the rule comes from ("records[2]", "RFC 6303", "home_router")
  std::vector<std::string> servers;  // lan: the servers asked, in order
  std::vector<std::string> records;  // records: the answer, one per line, each with its source
};

Explanation explain(const RouteTable& table, const Route& r);

// "A", "aaaa", "TYPE65", "65": the query types an operator asks about.
std::optional<std::uint16_t> qtype_from_text(std::string_view text);
std::string qtype_to_text(std::uint16_t qtype);

// "nas.home.arpa. 300 IN A 192.168.1.20" (RFC 1035 §5.1 presentation).
std::string record_to_text(const Record& r);

}  // namespace nxdns::route
