// Accepting an upstream response only when it answers the query we sent:
// a spoofed or misrouted answer must not reach the client.
#include <optional>

#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

namespace {

// Per thread: validation is a pure function any thread may call, and a
// count shared between threads would be a data race.
thread_local std::uint64_t validated = 0;

// The question of `msg`, which must hold exactly one, read where it lies.
// Runs for every datagram or frame a transport receives, so the name is
// not copied: a name at offset 12 is never compressed, because a
// pointer must aim below its own position yet past the header (RFC 1035
// §4.1.4; walk_name refuses anything else), so once it walks its octets are
// the name.
struct QuestionView {
  ByteView name;
  std::uint16_t qtype = 0;
  std::uint16_t qclass = 0;
};

std::optional<QuestionView> question_view(ByteView msg) {
  const auto h = parse_header(msg);
  if (!h || h->qdcount != 1) return std::nullopt;
  const wire::NameWalk n = wire::walk_name(msg, header_size, nullptr);
  if (n.error != ParseError::none || n.next != header_size + n.length || !wire::has(msg, n.next, 4)) return std::nullopt;
  return QuestionView{msg.subspan(header_size, n.length), wire::load16(msg, n.next), wire::load16(msg, n.next + 2)};
}

ResponseError check(std::uint16_t id, ByteView asked_name, std::uint16_t asked_qtype, std::uint16_t asked_qclass,
                    ByteView response) {
  ++validated;
  const auto h = parse_header(response);
  if (!h) return ResponseError::too_short;
  if (!h->qr()) return ResponseError::not_a_response;
  if (h->id != id) return ResponseError::id_mismatch;
  if (h->qdcount != 1) return ResponseError::bad_question_count;
  const auto got = question_view(response);
  if (!got) return ResponseError::malformed;
  // RFC 4343: names compare case-insensitively (0x20 randomisation by an
  // upstream may flip case); type and class must match exactly.
  if (got->qtype != asked_qtype || got->qclass != asked_qclass || !names_equal(got->name, asked_name)) {
    return ResponseError::question_mismatch;
  }
  return ResponseError::none;
}

}  // namespace

std::optional<Question> parse_question_of(ByteView msg) {
  const auto v = question_view(msg);
  if (!v) return std::nullopt;
  Question q;
  q.name.assign(v->name.begin(), v->name.end());
  q.qtype = v->qtype;
  q.qclass = v->qclass;
  return q;
}

std::uint64_t responses_validated() { return validated; }

ResponseError validate_response(const Query& query, ByteView response) {
  return check(query.header.id, query.question.name, query.question.qtype, query.question.qclass, response);
}

ResponseError validate_response(ByteView raw_query, ByteView response) {
  const auto q = question_view(raw_query);
  // Without a question of our own there is nothing to match against; the
  // response cannot be accepted.
  if (!q) return ResponseError::malformed;
  return check(get_id(raw_query), q->name, q->qtype, q->qclass, response);
}

}  // namespace nxdns::dns
