// libFuzzer target for the DNS codec: every public entry point on arbitrary
// bytes, plus the invariants that tie them together (a violated invariant
// traps, so the fuzzer reports it like a crash).
//
// Build (CMake builds it with -DNXDNS_FUZZ=ON and clang), or by hand:
//   clang++-14 -std=c++20 -g -fsanitize=fuzzer,address,undefined -I src \
//     tests/fuzz/dns_fuzz.cpp src/dns/*.cpp -o /tmp/dns_fuzz
//   /tmp/dns_fuzz -max_total_time=60 tests/fuzz/corpus/dns
#include <cstddef>
#include <cstdint>

#include "dns/message.hpp"
#include "dns/stream_message.hpp"

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

  // NOTIMP (other opcodes): a header-sized echo at least, never for QR.
  const Bytes notimp = make_notimp(raw);
  if (formerr.empty()) {
    require(notimp.empty());
  } else {
    require(notimp.size() >= header_size && get_id(notimp) == get_id(raw) && reply_rcode(notimp) == 4);
    require(parse_header(notimp)->qdcount <= 1);
  }
  // The size cap comes first, whatever the bytes.
  if (raw.size() > max_client_query && raw.size() >= header_size) require(p.error == ParseError::too_large);

  if (!p.query) {
    UpstreamQueryOptions o;
    require(prepare_upstream_query(raw, o).empty());
    return;
  }
  const Query& q = *p.query;

  // An error reply answers its query by our own validator's standard, and
  // passes the client rewrite unchanged (it is already what a client gets).
  for (Rcode rc : {Rcode::servfail, Rcode::refused, Rcode::formerr, Rcode::badvers}) {
    const Bytes reply = make_error_reply(raw, q, rc);
    require(validate_response(q, reply) == ResponseError::none);
    require(validate_response(raw, reply) == ResponseError::none);
    const auto expect = (rc == Rcode::badvers && !q.edns.present) ? Rcode::servfail : rc;
    require(reply_rcode(reply) == static_cast<std::uint16_t>(expect));
    const auto for_tcp = answer_for_client(reply, q, client_link(q, false));
    require(for_tcp && *for_tcp == reply);
  }
  (void)local_answer(q);

  // A query grown past the cap by one big option is refused, never built
  // into an upstream message (the 65,536-octet field defect). Sometimes:
  // the allocation would slow every run.
  if (raw.size() % 32 == 0 && !q.edns.present) {
    Bytes big(raw.begin(), raw.end());
    const std::size_t data = 65400 - std::min<std::size_t>(raw.size(), 65000);
    big.insert(big.end(), {0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0});
    big.push_back(static_cast<std::uint8_t>((data + 4) >> 8));
    big.push_back(static_cast<std::uint8_t>((data + 4) & 0xFF));
    big.insert(big.end(), {0xFD, 0xE9});
    big.push_back(static_cast<std::uint8_t>(data >> 8));
    big.push_back(static_cast<std::uint8_t>(data & 0xFF));
    big.insert(big.end(), data, 0);
    big[10] = static_cast<std::uint8_t>((q.header.arcount + 1) >> 8);
    big[11] = static_cast<std::uint8_t>((q.header.arcount + 1) & 0xFF);
    require(parse_query(big).error == ParseError::too_large);
    require(prepare_upstream_query(big).empty());
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
  // What goes to a stream transport can always be framed.
  // At most a fresh OPT (11), keepalive (4) and padding (4 + block - 1) more.
  require(up.size() <= raw.size() + 11 + 4 + 4 + block && StreamMessage::from(up).has_value());
  const QueryParse pu = parse_query(up);
  require(pu.query.has_value());
  require(pu.query->header.id == padded.id && pu.query->edns.present);
  require(pu.query->question.name == q.question.name && pu.query->question.qtype == q.question.qtype);
  // The header is ours: RD and AD set, the client's CD, nothing else.
  require(pu.query->header.flags == (0x0120 | (q.header.flags & 0x0010)));
  require(pu.query->edns.dnssec_ok == (q.edns.present && q.edns.dnssec_ok));
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

  // The input as an upstream answer to a query for its own question, from
  // a client with and without EDNS, over UDP and TCP: what comes out walks,
  // carries at most our OPT and only when the client sent one, no hop-by-hop
  // option, and fits the link.
  if (const auto asked = parse_question_of(raw)) {
    for (bool edns : {false, true}) {
      Bytes cq = make_query(get_id(raw), asked->name, asked->qtype,
                            edns ? std::optional<std::uint16_t>(static_cast<std::uint16_t>(512 + raw.size()))
                                 : std::nullopt);
      const QueryParse cp = parse_query(cq);
      if (!cp.query) continue;  // e.g. a compressed name
      for (bool udp : {true, false}) {
        const ClientLink link = client_link(*cp.query, udp);
        const auto out = answer_for_client(raw, *cp.query, link);
        if (!out) continue;
        const auto rc = reply_rcode(*out);
        require(rc.has_value());
        if (!edns) require(*rc <= 0xF);
        if (udp) require(out->size() <= link.udp_limit);
        else require(out->size() <= max_stream_message);
        const Bytes again = strip_padding(*out);
        require(again == *out);  // no padding left to strip
        require(!edns_tcp_keepalive(*out).has_value());
        // Idempotent: rewriting our own answer changes nothing.
        const auto twice = answer_for_client(*out, *cp.query, link);
        require(twice && *twice == *out);
      }
    }
  }

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
