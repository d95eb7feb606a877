// Parsing a client query: the gate every packet from the LAN passes. Any
// failure with a readable header becomes a FORMERR (or NOTIMP for opcodes,
// at the caller's choice); nothing malformed is forwarded upstream.
#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

namespace {

QueryParse fail(QueryParse r, ParseError e) {
  r.query.reset();
  r.error = e;
  return r;
}

}  // namespace

QueryParse parse_query(ByteView msg) {
  QueryParse r;
  const auto h = parse_header(msg);
  if (!h) return fail(r, ParseError::too_short);
  r.header_readable = true;
  // First, so nothing oversized is ever walked, let alone forwarded.
  if (msg.size() > max_client_query) return fail(r, ParseError::too_large);
  if (h->qr()) return fail(r, ParseError::not_a_query);
  if (h->opcode() != 0) return fail(r, ParseError::bad_opcode);
  if (h->qdcount != 1) return fail(r, ParseError::bad_question_count);

  Query q;
  q.header = *h;
  std::size_t off = header_size;
  if (const ParseError e = wire::read_question(msg, off, &q.question, off); e != ParseError::none) return fail(r, e);
  q.question_end = off;

  // RFC 1035 §4.1: a query carries its question and, since RFC 6891, an OPT
  // in the additional section. Records in the answer or authority sections
  // of an opcode-QUERY message have no defined meaning; rejecting them
  // (FORMERR) beats forwarding bytes the upstream might act on.
  // The one exception: an IXFR query names the client's serial in an SOA in
  // the authority section (RFC 1995 §3). It is walked so the query parses
  // and gets its REFUSED (local_answer) instead of FORMERR.
  const bool ixfr_soa = q.question.qtype == type_ixfr && h->nscount == 1;
  if (h->ancount != 0 || (h->nscount != 0 && !ixfr_soa)) return fail(r, ParseError::unexpected_records);
  for (unsigned i = 0; i < h->nscount; ++i) {
    wire::Rr rr;
    if (const ParseError e = wire::read_rr(msg, off, rr); e != ParseError::none) return fail(r, e);
    off = rr.end;
  }

  for (unsigned i = 0; i < h->arcount; ++i) {
    wire::Rr rr;
    if (const ParseError e = wire::read_rr(msg, off, rr); e != ParseError::none) return fail(r, e);
    off = rr.end;
    if (rr.type != type_opt) continue;  // e.g. TSIG: tolerated, not forwarded
    // RFC 6891 §6.1.1: one OPT at most, owned by the root; §6.1.2: the
    // options must tile RDATA exactly.
    if (q.edns.present || !rr.owner_is_root) return fail(r, ParseError::bad_opt);
    if (!wire::options_well_formed(msg.subspan(rr.rdata, rr.rdlength))) return fail(r, ParseError::bad_opt);
    q.edns.present = true;
    q.edns.udp_payload = rr.rrclass;
    q.edns.version = static_cast<std::uint8_t>((rr.ttl >> 16) & 0xFF);
    q.edns.dnssec_ok = (rr.ttl & wire::edns_do_bit) != 0;
  }
  if (off != msg.size()) return fail(r, ParseError::trailing_garbage);

  r.query = std::move(q);
  return r;
}

std::size_t client_udp_limit(const Edns& e) {
  if (!e.present) return classic_udp_limit;
  // RFC 6891 §6.2.3: values below 512 are treated as 512. The upper clamp
  // is ours: never send a UDP answer that risks IP fragmentation.
  if (e.udp_payload < classic_udp_limit) return classic_udp_limit;
  if (e.udp_payload > max_udp_limit) return max_udp_limit;
  return e.udp_payload;
}

}  // namespace nxdns::dns
