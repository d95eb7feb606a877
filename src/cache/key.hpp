#pragma once
// What a cached answer is filed under: (case-folded qname, qtype, qclass, DO,
// CD). DO and CD are part of the key because they change the answer (RFC
// 3225: DNSSEC records only with DO; RFC 4035 §3.2.2: CD answers may hold
// data that failed validation and must not reach a client that did not ask).
// Nothing else of a client's query reaches the upstream
// (dns::prepare_upstream_query), so every client with one key asks the same
// exchange: sharing its answer (cached or in flight) is exact, and what
// differs per client (ID, question case, RD, AD, its OPT) is rebuilt for
// each reply.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

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

// A key packed into a buffer of its own, for the hit path's lookup: no heap
// block whatever the name's length (a Key's string needs one past 10
// octets of name).
class KeyBuffer {
 public:
  explicit KeyBuffer(const dns::Query& q);
  std::string_view packed() const { return {buf_.data(), len_}; }

 private:
  std::array<char, 255 + 5> buf_;  // the longest wire name, then qtype, qclass, flags
  std::size_t len_ = 0;
};

// The wire name with A-Z folded to a-z (RFC 4343: only ASCII letters fold;
// every other octet is compared as is).
std::string fold_name(dns::ByteView wire_name);
Key make_key(const dns::Query& q);
Key make_key(dns::ByteView wire_name, std::uint16_t qtype, std::uint16_t qclass, bool dnssec_ok, bool checking_disabled);
// True when `k` is filed under the folded name `folded` (any type, class, DO, CD).
bool key_has_name(const Key& k, const std::string& folded);

}  // namespace nxdns::cache
