#pragma once
// What a cached answer is filed under: (case-folded qname, qtype, qclass, DO,
// CD). DO and CD are part of the key because they change the answer (RFC
// 3225: DNSSEC records only with DO; RFC 4035 §3.2.2: CD answers may hold
// data that failed validation and must not reach a client that did not ask).
#include <cstdint>
#include <string>

#include "dns/message.hpp"

namespace nxdns::cache {

// Packed into one string so that a short name needs no heap block of its
// own (SSO) and hashing is one pass: folded wire name, then qtype, qclass
// (big-endian) and one flag octet (bit 0 DO, bit 1 CD).
struct Key {
  std::string packed;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept { return std::hash<std::string>{}(k.packed); }
};

// The wire name with A-Z folded to a-z (RFC 4343: only ASCII letters fold;
// every other octet is compared as is).
std::string fold_name(dns::ByteView wire_name);
Key make_key(const dns::Query& q);
Key make_key(dns::ByteView wire_name, std::uint16_t qtype, std::uint16_t qclass, bool dnssec_ok, bool checking_disabled);
// True when `k` is filed under the folded name `folded` (any type, class, DO, CD).
bool key_has_name(const Key& k, const std::string& folded);

}  // namespace nxdns::cache
