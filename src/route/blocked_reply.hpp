#pragma once
// What a client gets for a blocked name (`blocking.answer`), with an
// Extended DNS Error 15, "Blocked" (RFC 8914 §4.16), for clients that speak
// EDNS, so a device or its owner can tell a block from a name that does not
// exist.
#include <cstdint>
#include <string_view>

#include "dns/message.hpp"

namespace nxdns::route {

enum class BlockedAnswer : std::uint8_t {
  nxdomain,  // NXDOMAIN with an SOA of the name
  null,      // A 0.0.0.0 / AAAA ::, NOERROR without data for other types
  refused,   // REFUSED
};

// Short, so that a name taken off a list (or allowed) works again soon on
// devices that cached the block.
inline constexpr std::uint32_t blocked_ttl = 10;

// `extra_text` goes into the EDE's EXTRA-TEXT (which list blocked it).
dns::Bytes make_blocked_reply(dns::ByteView raw_query, const dns::Query& q, BlockedAnswer answer,
                              std::string_view extra_text);

}  // namespace nxdns::route
