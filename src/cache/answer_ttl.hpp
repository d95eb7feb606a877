#pragma once
// Whether an upstream answer may be cached, and for how long. A pure
// function of the answer bytes and the configured clamps (table-tested in
// tests/cache/answer_ttl_test.cpp).
#include <cstdint>

#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::cache {

enum class Verdict : std::uint8_t {
  positive,       // NOERROR with answers: min TTL of its records
  negative,       // NXDOMAIN / NODATA with an SOA (RFC 2308 §5), or with an empty authority section (bare_negative_ttl)
  truncated,      // TC set: a partial answer must never be replayed
  error_rcode,    // SERVFAIL, REFUSED, FORMERR, ... or an extended RCODE
  ttl_zero,       // some record says "do not cache" (RFC 1035 §3.2.1)
  no_soa,         // negative whose authority holds records but no SOA (a referral): not cached
  malformed,      // does not walk as one question plus counted records
};
const char* describe(Verdict v);

// RFC 2308 §5: negative answers are kept for at most a few hours whatever
// the SOA says (values of 1-3 hours are what the RFC recommends).
inline constexpr std::uint32_t max_negative_ttl = 10800;

struct TtlClamp {
  std::uint32_t min_ttl = 0;
  std::uint32_t max_ttl = 86400;
  // Cap on negative answers. Lower for a LAN server's answers: a router
  // that is rebooting must not leave a name NXDOMAIN for hours.
  std::uint32_t max_negative = max_negative_ttl;
};
// A negative answer with nothing at all in its authority section (no SOA to
// take a TTL from: what many resolvers send for NODATA to HTTPS/SVCB and
// AAAA queries) is kept this long, the same 5 s unbound uses for answers
// without records (its NORR_TTL). RFC 2308 §5 advises against caching
// these because two caches could feed the answer to each other forever;
// the fixed few seconds bound that, min_ttl never raises it, and without it
// every such repeat went upstream and had no stale copy in an outage.
inline constexpr std::uint32_t bare_negative_ttl = 5;

struct AnswerTtl {
  Verdict verdict = Verdict::malformed;
  std::uint32_t ttl = 0;  // seconds, clamped; meaningful for positive/negative
  bool cacheable() const { return verdict == Verdict::positive || verdict == Verdict::negative; }
};

// Positive: the minimum TTL over every record except OPT (answer, authority
// and additional alike: the cached message is replayed whole, so no part of
// it may outlive its own TTL). Negative (NXDOMAIN, or NOERROR with an empty
// answer section): min(SOA TTL, SOA MINIMUM) of the authority's SOA, and
// also no longer than any other record carried; with an empty authority
// section, bare_negative_ttl (capped by max_ttl and by any record carried);
// with records but no SOA in the authority (a referral), not cached. A TTL
// with the top bit set
// counts as 0 (RFC 2181 §8). A raw TTL of 0 is never cached, even when
// min_ttl would raise it: the owner said "do not cache".
AnswerTtl answer_ttl(dns::ByteView response, const TtlClamp& clamp);
// The same, with `layout` = dns::wire::scan(response) found by the caller.
AnswerTtl answer_ttl(dns::ByteView response, const dns::wire::Layout& layout, const TtlClamp& clamp);

}  // namespace nxdns::cache
