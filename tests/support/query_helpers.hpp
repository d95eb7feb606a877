#pragma once
// The query a transport test sends and the check that an answer is for it,
// shared by the DoT and DoH transport fixtures. A base class rather than
// free functions: TEST bodies are fixture members, so they find these
// unqualified, as they did when each fixture had its own copy.
#include <cstdint>
#include <string>

#include "dns/message.hpp"

namespace nxdns::test {

struct QueryHelpers {
  // An A query with EDNS (1232-octet payload), RD set.
  static dns::Bytes query_for(std::uint16_t id, const std::string& name) {
    return dns::make_query(id, *dns::name_from_text(name), 1, 1232);
  }

  // Whether `response`'s question is `name` (case-insensitive).
  static bool answers_name(const dns::Bytes& response, const std::string& name) {
    const auto q = dns::parse_question_of(response);
    const auto want = dns::name_from_text(name);
    return q && want && dns::names_equal(q->name, *want);
  }
};

}  // namespace nxdns::test
