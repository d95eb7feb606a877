// Accepting an upstream response only when it answers the query we sent:
// a spoofed or misrouted answer must not reach the client.
#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

namespace {

ResponseError check(std::uint16_t id, const Question& asked, ByteView response) {
  const auto h = parse_header(response);
  if (!h) return ResponseError::too_short;
  if (!h->qr()) return ResponseError::not_a_response;
  if (h->id != id) return ResponseError::id_mismatch;
  if (h->qdcount != 1) return ResponseError::bad_question_count;
  Question got;
  std::size_t next = 0;
  if (wire::read_question(response, header_size, &got, next) != ParseError::none) return ResponseError::malformed;
  // RFC 4343: names compare case-insensitively (0x20 randomisation by an
  // upstream may flip case); type and class must match exactly.
  if (got.qtype != asked.qtype || got.qclass != asked.qclass || !names_equal(got.name, asked.name)) {
    return ResponseError::question_mismatch;
  }
  return ResponseError::none;
}

}  // namespace

std::optional<Question> parse_question_of(ByteView msg) {
  const auto h = parse_header(msg);
  if (!h || h->qdcount != 1) return std::nullopt;
  Question q;
  std::size_t next = 0;
  if (wire::read_question(msg, header_size, &q, next) != ParseError::none) return std::nullopt;
  return q;
}

ResponseError validate_response(const Query& query, ByteView response) {
  return check(query.header.id, query.question, response);
}

ResponseError validate_response(ByteView raw_query, ByteView response) {
  const auto q = parse_question_of(raw_query);
  // Without a question of our own there is nothing to match against; the
  // response cannot be accepted.
  if (!q) return ResponseError::malformed;
  return check(get_id(raw_query), *q, response);
}

}  // namespace nxdns::dns
