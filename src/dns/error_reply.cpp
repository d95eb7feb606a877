// Answers nxdns produces itself: SERVFAIL / REFUSED / FORMERR, the replies
// carrying data it holds (make_reply), and the probe/burst query builder.
#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

namespace {

// What every reply of ours copies from the query's header (RFC 1035 §4.1.1,
// RFC 4035 §3.1.6); everything else is ours to set.
constexpr std::uint16_t echoed_flags = wire::opcode_mask | wire::flag_rd | wire::flag_cd;

void put_header(Bytes& out, std::uint16_t id, std::uint16_t flags, std::uint16_t qd, std::uint16_t ar,
                std::uint16_t an = 0, std::uint16_t ns = 0) {
  wire::put16(out, id);
  wire::put16(out, flags);
  wire::put16(out, qd);
  wire::put16(out, an);
  wire::put16(out, ns);
  wire::put16(out, ar);
}

// A complete, uncompressed wire name: what a question we build may carry.
bool valid_uncompressed_name(ByteView name) {
  const wire::NameWalk w = wire::walk_name(name, 0, nullptr);
  // walk_name refuses pointers below the header offset, so in a bare name
  // every pointer fails: exactly the "uncompressed" requirement.
  return w.error == ParseError::none && w.next == name.size();
}

}  // namespace

Bytes make_error_reply(ByteView raw_query, const Query& q, Rcode rcode) {
  return make_reply(raw_query, q, rcode, false, OwnRecords{});
}

Bytes make_reply(ByteView raw_query, const Query& q, Rcode rcode, bool authoritative, const OwnRecords& records) {
  auto code = static_cast<std::uint16_t>(rcode);
  // The upper 8 bits live in the OPT (RFC 6891 §6.1.3); without one they
  // would be silently lost and the client would read the low 4 (BADVERS
  // would read NOERROR).
  if (code > 0xF && !q.edns.present) code = static_cast<std::uint16_t>(Rcode::servfail);
  // RFC 1035 §4.1.1: ID, opcode and RD are copied from the query; RFC 4035
  // §3.1.6: so is CD.
  const std::uint16_t flags = static_cast<std::uint16_t>(
      wire::flag_qr | (q.header.flags & echoed_flags) | (authoritative ? wire::flag_aa : 0) | wire::flag_ra |
      (code & 0xF));
  Bytes out;
  out.reserve(q.question_end + records.records.size() + wire::opt_fixed_size);
  put_header(out, q.header.id, flags, 1, q.edns.present ? 1 : 0, records.answers, records.authorities);
  if (q.question_end > header_size && q.question_end <= raw_query.size()) {
    // The question exactly as the client wrote it (its case included: some
    // clients use 0x20 case randomisation and compare it).
    out.insert(out.end(), raw_query.begin() + header_size,
               raw_query.begin() + static_cast<std::ptrdiff_t>(q.question_end));
  } else {
    // `raw_query` is not the packet `q` came from; rebuild from the parse.
    out.insert(out.end(), q.question.name.begin(), q.question.name.end());
    wire::put16(out, q.question.qtype);
    wire::put16(out, q.question.qclass);
  }
  out.insert(out.end(), records.records.begin(), records.records.end());
  if (q.edns.present) {
    // RFC 6891 §7: answer OPT with OPT, version 0 (the one we implement).
    // RFC 3225 §3: DO is copied back.
    const std::uint32_t ttl = (std::uint32_t{static_cast<std::uint8_t>(code >> 4)} << 24) |
                              (q.edns.dnssec_ok ? wire::edns_do_bit : 0);
    wire::put_opt_header(out, max_udp_limit, ttl, 0);
  }
  return out;
}

namespace {

// A reply of header (and possibly question) only, for a packet parse_query
// refused: nothing past what we could read is echoed.
Bytes header_reply(ByteView raw_packet, Rcode rcode, bool echo_question) {
  const auto h = parse_header(raw_packet);
  if (!h || h->qr()) return {};
  const std::uint16_t flags = static_cast<std::uint16_t>(
      wire::flag_qr | (h->flags & echoed_flags) | wire::flag_ra |
      (static_cast<std::uint16_t>(rcode) & 0xF));
  std::size_t question_end = header_size;
  if (echo_question && h->qdcount == 1 && wire::read_question(raw_packet, header_size, nullptr, question_end) != ParseError::none)
    question_end = header_size;
  Bytes out;
  out.reserve(question_end);
  put_header(out, h->id, flags, question_end > header_size ? 1 : 0, 0);
  out.insert(out.end(), raw_packet.begin() + header_size, raw_packet.begin() + static_cast<std::ptrdiff_t>(question_end));
  return out;
}

}  // namespace

Bytes make_formerr(ByteView raw_packet) { return header_reply(raw_packet, Rcode::formerr, false); }

// RFC 3425 (IQUERY), RFC 1996 §3.12 / RFC 2136 §3 (NOTIFY, UPDATE: servers
// that do not implement them answer NOTIMP), RFC 8490 §5.1 (DSO).
Bytes make_notimp(ByteView raw_packet) { return header_reply(raw_packet, Rcode::notimp, true); }

Bytes make_query(std::uint16_t id, ByteView wire_name, std::uint16_t qtype, std::optional<std::uint16_t> udp_payload) {
  if (!valid_uncompressed_name(wire_name)) return {};
  Bytes out;
  out.reserve(header_size + wire_name.size() + 4 + wire::opt_fixed_size);
  put_header(out, id, wire::flag_rd, 1, udp_payload ? 1 : 0);
  out.insert(out.end(), wire_name.begin(), wire_name.end());
  wire::put16(out, qtype);
  wire::put16(out, class_in);
  if (udp_payload) wire::put_opt_header(out, *udp_payload, 0, 0);
  return out;
}

}  // namespace nxdns::dns
