// Walking questions and resource records (RFC 1035 §4.1.2-§4.1.3) without
// interpreting RDATA: enough to find the OPT record and section boundaries.
#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns::wire {

ParseError read_question(ByteView msg, std::size_t offset, Question* q, std::size_t& next) {
  const NameWalk n = walk_name(msg, offset, q ? &q->name : nullptr);
  if (n.error != ParseError::none) return n.error;
  if (!has(msg, n.next, 4)) return ParseError::truncated;
  if (q) {
    q->qtype = load16(msg, n.next);
    q->qclass = load16(msg, n.next + 2);
  }
  next = n.next + 4;
  return ParseError::none;
}

ParseError read_rr(ByteView msg, std::size_t offset, Rr& rr) {
  const NameWalk n = walk_name(msg, offset, nullptr);
  if (n.error != ParseError::none) return n.error;
  // type 2, class 2, ttl 4, rdlength 2
  if (!has(msg, n.next, 10)) return ParseError::truncated;
  rr.start = offset;
  rr.owner_is_root = n.length == 1;
  rr.type = load16(msg, n.next);
  rr.rrclass = load16(msg, n.next + 2);
  rr.ttl = load32(msg, n.next + 4);
  rr.rdlength_at = n.next + 8;
  rr.rdlength = load16(msg, n.next + 8);
  rr.rdata = n.next + 10;
  if (!has(msg, rr.rdata, rr.rdlength)) return ParseError::truncated;
  rr.end = rr.rdata + rr.rdlength;
  return ParseError::none;
}

Layout scan(ByteView msg) {
  Layout l;
  const auto h = parse_header(msg);
  if (!h) {
    l.error = ParseError::too_short;
    return l;
  }
  l.header = *h;
  std::size_t off = header_size;
  for (unsigned i = 0; i < h->qdcount; ++i) {
    const ParseError e = read_question(msg, off, nullptr, off);
    if (e != ParseError::none) {
      l.error = e;
      return l;
    }
  }
  l.questions_ok = true;
  l.questions_end = off;
  const unsigned before_additional = unsigned{h->ancount} + h->nscount;
  const unsigned total = before_additional + h->arcount;
  for (unsigned i = 0; i < total; ++i) {
    Rr rr;
    const ParseError e = read_rr(msg, off, rr);
    if (e != ParseError::none) {
      l.error = e;
      return l;
    }
    if (i >= before_additional && rr.type == type_opt) {
      if (l.opt_count++ == 0) {
        l.opt = rr;
        l.opt_index = i;
      }
    }
    off = rr.end;
  }
  l.end = off;
  l.opt_is_last = l.opt && l.opt->end == l.end;
  return l;
}

}  // namespace nxdns::dns::wire
