// Wire replies for what is answered at home: local records, the
// synthesized negative answers of the built-in zones, and localhost. The
// header, question and OPT come from dns::make_reply, like every reply of
// our own; only the records are built here.
#include "route/local_reply.hpp"

#include "dns/wire.hpp"

namespace nxdns::route {

namespace {

// The SOA timers of RFC 6303 §3's example zone. Nothing transfers these
// zones, so only MINIMUM (the negative TTL) matters to anyone.
constexpr std::uint32_t soa_serial = 1;
constexpr std::uint32_t soa_refresh = 3600;
constexpr std::uint32_t soa_retry = 1200;
constexpr std::uint32_t soa_expire = 604800;
// RFC 6303 §3: the contact of a zone nobody administers.
constexpr std::uint8_t nobody_invalid[] = {6, 'n', 'o', 'b', 'o', 'd', 'y', 7, 'i', 'n', 'v', 'a', 'l', 'i', 'd', 0};

constexpr std::uint8_t loopback_v4[] = {127, 0, 0, 1};
constexpr std::uint8_t loopback_v6[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

// RFC 2308 §3: the SOA of the zone in the authority section; its TTL and
// MINIMUM both negative_ttl, so the answer lives exactly that long (§5).
void put_soa(dns::Bytes& out, dns::ByteView zone, std::uint32_t negative_ttl) {
  dns::Bytes rdata(zone.begin(), zone.end());  // MNAME: the zone itself
  rdata.insert(rdata.end(), std::begin(nobody_invalid), std::end(nobody_invalid));
  for (std::uint32_t v : {soa_serial, soa_refresh, soa_retry, soa_expire, negative_ttl}) dns::wire::put32(rdata, v);
  dns::wire::put_rr(out, zone, type_soa, dns::class_in, negative_ttl, rdata);
}

}  // namespace

dns::Bytes make_negative_reply(dns::ByteView raw_query, const dns::Query& q, dns::Rcode rcode, dns::ByteView zone,
                               std::uint32_t negative_ttl) {
  dns::Bytes soa;
  put_soa(soa, zone, negative_ttl);
  return dns::make_reply(raw_query, q, rcode, true, dns::OwnRecords{soa, 0, 1});
}

dns::Bytes make_records_reply(dns::ByteView raw_query, const dns::Query& q, const LocalRecords::Lookup& lookup,
                              dns::ByteView zone, std::uint32_t negative_ttl) {
  if (lookup.kind == LocalRecords::Lookup::Kind::absent)
    return make_negative_reply(raw_query, q, dns::Rcode::nxdomain, zone, negative_ttl);
  if (lookup.kind == LocalRecords::Lookup::Kind::nodata || lookup.chain.empty())
    return make_negative_reply(raw_query, q, dns::Rcode::noerror, zone, negative_ttl);
  // ANCOUNT is 16 bits; so many records could not travel in one message
  // anyway (RFC 1035 §4.2.2), and a miscounted one must never be sent.
  if (lookup.chain.size() > 0xFFFF) return dns::make_error_reply(raw_query, q, dns::Rcode::servfail);
  dns::Bytes answers;
  for (const Record* r : lookup.chain) {
    // The question's spelling where the record owns the question's name,
    // as a compression pointer to the question would give it: a client
    // that randomised the case of its name (0x20) sees it back.
    const dns::ByteView owner = dns::names_equal(r->owner, q.question.name) ? dns::ByteView(q.question.name)
                                                                            : dns::ByteView(r->owner);
    dns::wire::put_rr(answers, owner, r->type, dns::class_in, r->ttl, r->rdata);
  }
  return dns::make_reply(raw_query, q, dns::Rcode::noerror, true,
                         dns::OwnRecords{answers, static_cast<std::uint16_t>(lookup.chain.size()), 0});
}

dns::Bytes make_loopback_reply(dns::ByteView raw_query, const dns::Query& q, dns::ByteView zone, std::uint32_t ttl) {
  const std::uint16_t qtype = q.question.qtype;
  dns::Bytes answers;
  std::uint16_t count = 0;
  if (qtype == type_a || qtype == dns::type_any) {
    dns::wire::put_rr(answers, q.question.name, type_a, dns::class_in, ttl, loopback_v4);
    ++count;
  }
  if (qtype == type_aaaa || qtype == dns::type_any) {
    dns::wire::put_rr(answers, q.question.name, type_aaaa, dns::class_in, ttl, loopback_v6);
    ++count;
  }
  if (count == 0) return make_negative_reply(raw_query, q, dns::Rcode::noerror, zone, ttl);
  return dns::make_reply(raw_query, q, dns::Rcode::noerror, true, dns::OwnRecords{answers, count, 0});
}

}  // namespace nxdns::route
