#pragma once
// Wire replies for names answered at home (local records, built-in zones).
// Each is a complete response to the client's query: ID, opcode, RD and CD
// echoed, QR, AA (we are the authority for what we answer locally) and RA
// set, the question verbatim, and, when the query carried one, a minimal
// OPT. The engine passes it through dns::answer_for_client like any answer,
// which gives it the client's OPT and UDP truncation.
#include <cstdint>

#include "dns/message.hpp"
#include "route/local_records.hpp"

namespace nxdns::route {

// NOERROR with `lookup.chain` as the answer section (owner names written in
// full, no compression: the records are few and small; a record owning the
// question's name carries the question's spelling); or, for nodata, no
// answer and the SOA of `zone` in the authority section; for absent,
// NXDOMAIN with that SOA (make_negative_reply).
dns::Bytes make_records_reply(dns::ByteView raw_query, const dns::Query& q, const LocalRecords::Lookup& lookup,
                              dns::ByteView zone, std::uint32_t negative_ttl);
// `rcode` (NXDOMAIN, or NOERROR for nodata) with the synthesized SOA of
// `zone` (RFC 6303 §3: MNAME the zone, RNAME nobody.invalid., serial 1) in
// the authority section, TTL and MINIMUM both `negative_ttl` (RFC 2308 §5:
// the negative answer lives min(SOA TTL, MINIMUM)).
dns::Bytes make_negative_reply(dns::ByteView raw_query, const dns::Query& q, dns::Rcode rcode, dns::ByteView zone,
                               std::uint32_t negative_ttl);
// RFC 6761 §6.3 for a name under localhost: A 127.0.0.1 or AAAA ::1 (ANY:
// both) owned by the question's name, NOERROR without data (SOA of `zone`)
// for any other type; `ttl` is the records' TTL and the negative TTL.
dns::Bytes make_loopback_reply(dns::ByteView raw_query, const dns::Query& q, dns::ByteView zone, std::uint32_t ttl);

}  // namespace nxdns::route
