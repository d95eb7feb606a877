// libFuzzer target for the DNS codec: every public entry point on arbitrary
// bytes, plus the invariants that tie them together (a violated invariant
// traps, so the fuzzer reports it like a crash).
//
// Build (the lead wires it into CMake under NXDNS_FUZZ):
//   clang++-14 -std=c++20 -g -fsanitize=fuzzer,address,undefined -I src \
//     tests/fuzz/dns_fuzz.cpp src/dns/*.cpp -o /tmp/dns_fuzz
//   /tmp/dns_fuzz -max_total_time=60 tests/fuzz/corpus/dns
#include <cstddef>
#include <cstdint>

#include "dns/message.hpp"

using namespace nxdns::dns;

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

void exercise_query(ByteView raw) {
  const QueryParse p = parse_query(raw);
  require((p.error == ParseError::none) == p.query.has_value());
  require(p.header_readable == (raw.size() >= header_size));

  const Bytes formerr = make_formerr(raw);
  if (raw.size() < header_size || parse_header(raw)->qr()) {
    require(formerr.empty());
  } else {
    require(formerr.size() == header_size && get_id(formerr) == get_id(raw));
  }

  if (!p.query) {
    UpstreamQueryOptions o;
    require(prepare_upstream_query(raw, o).empty());
    return;
  }
  const Query& q = *p.query;

  // An error reply answers its query by our own validator's standard.
  for (Rcode rc : {Rcode::servfail, Rcode::refused, Rcode::formerr}) {
    const Bytes reply = make_error_reply(raw, q, rc);
    require(validate_response(q, reply) == ResponseError::none);
    require(validate_response(raw, reply) == ResponseError::none);
    require(parse_header(reply)->rcode() == static_cast<std::uint8_t>(rc));
  }

  // Names survive the trip through presentation form.
  const auto back = name_from_text(name_to_text(q.question.name));
  require(back && names_equal(*back, q.question.name) && *back == q.question.name);

  // The upstream rewrite is a well-formed query, padded as asked, carrying
  // the same question; stripping its padding gives the unpadded rewrite.
  const std::size_t block = 1 + (raw.size() % 200);
  UpstreamQueryOptions padded;
  padded.pad_block = block;
  padded.tcp_keepalive = (raw.size() & 1) != 0;
  padded.id = static_cast<std::uint16_t>(raw.size() * 31);
  UpstreamQueryOptions plain = padded;
  plain.pad_block = 0;
  const Bytes up = prepare_upstream_query(raw, padded);
  const Bytes up_plain = prepare_upstream_query(raw, plain);
  require(!up.empty() && !up_plain.empty());
  const QueryParse pu = parse_query(up);
  require(pu.query.has_value());
  require(pu.query->header.id == padded.id && pu.query->edns.present);
  require(pu.query->question.name == q.question.name && pu.query->question.qtype == q.question.qtype);
  if (up.size() != up_plain.size()) require(up.size() % block == 0);
  require(strip_padding(up) == up_plain || up == up_plain);
  // Ours is the empty client form and any client keepalive was dropped.
  require(!edns_tcp_keepalive(up).has_value());

  // The same bytes with QR set pass as the response to this query.
  Bytes as_response(raw.begin(), raw.end());
  as_response[2] |= 0x80;
  require(validate_response(q, as_response) == ResponseError::none);
  require(validate_response(raw, as_response) == ResponseError::none);
}

void exercise_response(ByteView raw) {
  // Truncation always fits the limit (floor: a bare header).
  const std::size_t limit = raw.empty() ? 0 : 12 + raw[0] * 4;
  const Bytes t = truncate_for_udp(raw, limit);
  if (raw.size() <= limit) {
    require(t.size() == raw.size());
  } else if (raw.size() >= header_size) {
    require(t.size() <= (limit < header_size ? header_size : limit));
    require(parse_header(t)->tc());
  } else {
    require(t.empty());
  }

  const Bytes s = strip_padding(raw);
  require(s.size() <= raw.size());
  // Padding removal never changes what else the OPT says.
  require(edns_tcp_keepalive(s) == edns_tcp_keepalive(raw));
  if (s.size() != raw.size()) {
    require(strip_padding(s) == s);
    require(parse_question_of(s).has_value() == parse_question_of(raw).has_value());
  }

  if (const auto q = parse_question_of(raw)) {
    require(names_equal(q->name, q->name));
    require(q->name.size() <= max_name_wire);
  }
  (void)name_to_text(raw);
  (void)names_equal(raw, raw);

  // Two halves as query and response.
  const std::size_t half = raw.size() / 2;
  (void)validate_response(raw.first(half), raw.subspan(half));
  (void)describe(validate_response(raw.subspan(half), raw.first(half)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView raw(data, size);
  exercise_query(raw);
  exercise_response(raw);
  return 0;
}
