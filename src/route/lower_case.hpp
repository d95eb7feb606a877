#pragma once
// The household's records are kept in one spelling, lower case: DNS names
// compare case-insensitively (RFC 4343), and one spelling makes identical
// records identical and lookups a plain hash-table find.
#include <string>

#include "dns/message.hpp"

namespace nxdns::route {

// ASCII letters only (RFC 4343 §3: other octets do not fold). On a wire
// name this touches only the labels' letters: length octets are at most
// 63, below 'A'.
inline void lower_case(dns::Bytes& wire_name) {
  for (std::uint8_t& c : wire_name)
    if (c >= 'A' && c <= 'Z') c = static_cast<std::uint8_t>(c - 'A' + 'a');
}
inline std::string lower_case(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}
// The key of a wire name in LocalRecords' table.
inline std::string lower_case_key(dns::ByteView wire_name) {
  return lower_case(std::string(wire_name.begin(), wire_name.end()));
}

}  // namespace nxdns::route
