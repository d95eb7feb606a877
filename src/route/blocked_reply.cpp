#include "route/blocked_reply.hpp"

#include "route/local_records.hpp"
#include "route/lower_case.hpp"
#include "route/local_reply.hpp"
#include "route/route_table.hpp"

namespace nxdns::route {

dns::Bytes make_blocked_reply(dns::ByteView raw_query, const dns::Query& q, BlockedAnswer answer,
                              std::string_view extra_text) {
  const dns::Bytes& qname = q.question.name;
  dns::Bytes reply;
  switch (answer) {
    case BlockedAnswer::refused:
      reply = dns::make_error_reply(raw_query, q, dns::Rcode::refused);
      break;
    case BlockedAnswer::null: {
      const std::uint16_t t = q.question.qtype;
      if (t != type_a && t != type_aaaa) {
        reply = make_negative_reply(raw_query, q, dns::Rcode::noerror, qname, blocked_ttl);
        break;
      }
      // The unspecified address: nothing listens there, and a device's
      // connection fails at once instead of timing out.
      Record r;
      r.owner = qname;
      lower_case(r.owner);
      r.type = t;
      r.ttl = blocked_ttl;
      r.rdata.assign(t == type_a ? 4 : 16, 0);
      r.source = "blocking";
      LocalRecords::Lookup l;
      l.kind = LocalRecords::Lookup::Kind::answer;
      l.chain.push_back(&r);
      reply = make_records_reply(raw_query, q, l, qname, blocked_ttl);
      break;
    }
    case BlockedAnswer::nxdomain:
      reply = make_negative_reply(raw_query, q, dns::Rcode::nxdomain, qname, blocked_ttl);
      break;
  }
  return dns::with_extended_error(reply, dns::ede_blocked, extra_text);
}

}  // namespace nxdns::route
