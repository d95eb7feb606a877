#pragma once
// A cached answer made into an answer to this client's query: the client's
// ID, RD bit and question bytes (0x20 case kept), TTLs aged. The result looks
// like what the upstream would have sent for this query, so the engine
// delivers it through the same client-facing step as a fresh answer (OPT
// rebuilt for the client, UDP truncation). Pure; fuzzed
// (tests/fuzz/cache_rewrite_fuzz.cpp).
#include <cstdint>
#include <optional>

#include "dns/message.hpp"

namespace nxdns::cache {

struct ClientQuestion {
  std::uint16_t id = 0;
  bool recursion_desired = true;
  // The client's question section exactly as received: bytes
  // [header_size, question_end) of its query.
  dns::ByteView question;
};

// RFC 8767 §4: the TTL a stale answer carries.
inline constexpr std::uint32_t stale_answer_ttl = 30;

// Every record's TTL except OPT's becomes `fixed_ttl` when given (stale
// answers), else max(0, ttl - age_seconds). Returns nullopt when `stored` does
// not walk as one question plus its counted records, or when its question is
// not the client's (name case-insensitively, type and class exactly). The
// two questions then have the same length, so every compression pointer in
// the stored answer still lands where it did.
std::optional<dns::Bytes> rewrite_answer(dns::ByteView stored, const ClientQuestion& client, std::uint32_t age_seconds,
                                         std::optional<std::uint32_t> fixed_ttl = std::nullopt);

// The stored form of an answer: every record TTL except OPT's clamped to
// [lo, hi], so that what a client is told never outlives (max_ttl) or falls
// short of (min_ttl) how long the cache keeps the answer. For a negative
// answer `hi` is its negative TTL: RFC 2308 §3 has the SOA carry it. Returns
// nullopt when the message does not walk.
std::optional<dns::Bytes> clamp_record_ttls(dns::ByteView answer, std::uint32_t lo, std::uint32_t hi);

// The question section of a parsed client query, for ClientQuestion.
inline dns::ByteView question_bytes(dns::ByteView raw_query, const dns::Query& q) {
  return raw_query.subspan(dns::header_size, q.question_end - dns::header_size);
}

}  // namespace nxdns::cache
