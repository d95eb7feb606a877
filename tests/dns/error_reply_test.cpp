// Replies nxdns writes itself: error replies, FORMERR, probe queries.
#include "dns/message.hpp"
#include "packets.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::dns;
using namespace nxdns::dns::test;

namespace {

Query parsed(const Bytes& b) {
  QueryParse p = parse_query(b);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  return *p.query;
}

}  // namespace

TEST_GROUP(ErrorReply){};

TEST(ErrorReply, ServfailEchoesIdRdAndQuestion) {
  const Bytes b = query(0xA1B2, "Mixed.Case.Example", 28);
  const Query q = parsed(b);
  const Bytes r = make_error_reply(b, q, Rcode::servfail);
  const auto h = parse_header(r);
  CHECK_TRUE(h.has_value());
  CHECK_EQUAL(0xA1B2, h->id);
  CHECK_TRUE(h->qr());
  CHECK_TRUE(h->rd());
  CHECK_TRUE(h->flags & 0x0080);  // RA
  CHECK_FALSE(h->tc());
  CHECK_EQUAL(0, h->opcode());
  CHECK_EQUAL(2, h->rcode());
  CHECK_EQUAL(1, h->qdcount);
  CHECK_EQUAL(0, h->ancount);
  CHECK_EQUAL(0, h->nscount);
  CHECK_EQUAL(0, h->arcount);
  // Question verbatim, case included.
  const Bytes question(b.begin() + 12, b.end());
  const Bytes echoed(r.begin() + 12, r.end());
  CHECK_BYTES(question, echoed);
}

TEST(ErrorReply, RcodesAndRdClear) {
  Bytes b = query(7, "example.com");
  b[2] &= static_cast<std::uint8_t>(~0x01);  // RD off
  const Query q = parsed(b);
  const auto refused = parse_header(make_error_reply(b, q, Rcode::refused));
  CHECK_EQUAL(5, refused->rcode());
  CHECK_FALSE(refused->rd());
  const auto formerr = parse_header(make_error_reply(b, q, Rcode::formerr));
  CHECK_EQUAL(1, formerr->rcode());
}

TEST(ErrorReply, OnlyIdOpcodeRdCdEchoedFromFlags) {
  Bytes b = query(7, "example.com");
  b[2] |= 0x06;  // AA, TC on a query: not echoed
  b[3] |= 0x70;  // Z, AD: not echoed; CD: echoed (RFC 4035 §3.1.6)
  const Query q = parsed(b);
  const Bytes r = make_error_reply(b, q, Rcode::servfail);
  CHECK_EQUAL(0x8192, get16(r, 2));
  b[3] &= static_cast<std::uint8_t>(~0x10);
  CHECK_EQUAL(0x8185, get16(make_error_reply(b, parsed(b), Rcode::refused), 2));
}

TEST(ErrorReply, EdnsQueryGetsMinimalOpt) {
  Bytes b = query(7, "example.com");
  b[11] = 1;
  append(b, opt_rr(4096, 0x8000, option(10, Bytes(8, 1))));
  const Query q = parsed(b);
  const Bytes r = make_error_reply(b, q, Rcode::servfail);
  CHECK_EQUAL(1, parse_header(r)->arcount);
  Bytes expected(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(q.question_end));
  append(expected, opt_rr(1232, 0x8000));  // DO copied, no options
  const Bytes tail(expected.begin() + 12, expected.end());
  const Bytes got(r.begin() + 12, r.end());
  CHECK_BYTES(tail, got);
  // And the reply itself is a well-formed message with that OPT.
  CHECK_TRUE(parse_question_of(r).has_value());
}

TEST(ErrorReply, ErrorRepliesAreNotAuthoritative) {
  const Bytes b = query(7, "example.com");
  CHECK_EQUAL(0, get16(make_error_reply(b, parsed(b), Rcode::refused), 2) & 0x0400);
}

TEST(ErrorReply, MakeReplyPutsRecordsBetweenQuestionAndOpt) {
  Bytes b = query(0x0102, "Host.Example", 1, true);
  b[3] |= 0x10;  // CD
  const Query q = parsed(b);
  Bytes records = a_rr(wname("host.example"), 0xC0A80102, 60);
  const Bytes soa_like = a_rr(wname("example"), 0x0A000001, 30);
  append(records, soa_like);
  const Bytes r = make_reply(b, q, Rcode::noerror, true, OwnRecords{records, 1, 1});
  // QR, AA, RD, RA and CD; NOERROR.
  CHECK_EQUAL(0x8590, get16(r, 2));
  CHECK_EQUAL(1, get16(r, 4));
  CHECK_EQUAL(1, get16(r, 6));
  CHECK_EQUAL(1, get16(r, 8));
  CHECK_EQUAL(1, get16(r, 10));
  Bytes expected(b.begin() + 12, b.begin() + static_cast<std::ptrdiff_t>(q.question_end));
  append(expected, records);
  append(expected, opt_rr(1232, 0));
  const Bytes got(r.begin() + 12, r.end());
  CHECK_BYTES(expected, got);
  // A client receives it as it is.
  const auto delivered = answer_for_client(r, q, client_link(q, true));
  CHECK_TRUE(delivered.has_value());
  CHECK_BYTES(r, *delivered);
}

TEST(ErrorReply, MakeReplyWithoutOptAndWithAnExtendedRcode) {
  const Bytes b = query(9, "example.com");
  const Query q = parsed(b);
  const Bytes records = a_rr(wname("example.com"), 0x0A000001);
  const Bytes r = make_reply(b, q, Rcode::nxdomain, false, OwnRecords{records, 0, 1});
  CHECK_EQUAL(0x8183, get16(r, 2));
  CHECK_EQUAL(0, get16(r, 10));
  CHECK_EQUAL(q.question_end + records.size(), r.size());
  // BADVERS cannot be said without an OPT: SERVFAIL, as make_error_reply.
  CHECK_EQUAL(0x8182, get16(make_reply(b, q, Rcode::badvers, false, OwnRecords{}), 2));
}

TEST(ErrorReply, RebuildsQuestionWhenRawDoesNotMatch) {
  const Bytes b = query(7, "example.com", 15);
  const Query q = parsed(b);
  const Bytes r = make_error_reply(Bytes{}, q, Rcode::servfail);
  const auto qq = parse_question_of(r);
  CHECK_TRUE(qq.has_value());
  CHECK_EQUAL(15, qq->qtype);
  CHECK_BYTES(wname("example.com"), qq->name);
}

TEST(ErrorReply, FormerrFromHeaderOnly) {
  Bytes b = header(0x4242, 0x0100, 1, 0, 0, 0);
  const Bytes r = make_formerr(b);
  const Bytes expected = header(0x4242, 0x8181, 0, 0, 0, 0);
  CHECK_BYTES(expected, r);
}

TEST(ErrorReply, FormerrEchoesOpcodeAndCdNotOtherFlags) {
  Bytes b = header(0x0102, 0x2000 | 0x0400 | 0x0020 | 0x0010, 1, 0, 0, 0);  // opcode 4, AA, AD, CD; RD clear
  b.push_back(0xC0);
  const Bytes r = make_formerr(b);
  UNSIGNED_LONGS_EQUAL(12, r.size());
  CHECK_EQUAL(0xA091, get16(r, 2));
  CHECK_EQUAL(0x0102, get16(r, 0));
}

TEST(ErrorReply, NotimpEchoesCd) {
  Bytes b = query(0x0203, "example.com");
  set16(b, 2, 0x2000 | 0x0100 | 0x0010);  // opcode 4 (NOTIFY), RD, CD
  const Bytes r = make_notimp(b);
  CHECK_EQUAL(0xA194, get16(r, 2));
}

TEST(ErrorReply, FormerrDropsUnreadableAndResponses) {
  CHECK_TRUE(make_formerr(Bytes(11, 0)).empty());
  CHECK_TRUE(make_formerr(header(1, 0x8100, 1, 0, 0, 0)).empty());
}

TEST(ErrorReply, MakeQueryWithAndWithoutEdns) {
  const Bytes plain = make_query(0x1111, wname("example.com"), 1, std::nullopt);
  CHECK_BYTES(query(0x1111, "example.com", 1, false), plain);
  const Bytes edns = make_query(0x2222, wname("example.com"), 28, std::uint16_t{1400});
  CHECK_BYTES(query(0x2222, "example.com", 28, true, 1400), edns);
  const QueryParse p = parse_query(edns);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  CHECK_EQUAL(1400, p.query->edns.udp_payload);
}

TEST(ErrorReply, MakeQueryRejectsBadName) {
  CHECK_TRUE(make_query(1, Bytes{}, 1, std::nullopt).empty());
  CHECK_TRUE(make_query(1, Bytes{1, 'a'}, 1, std::nullopt).empty());
  CHECK_TRUE(make_query(1, Bytes{1, 'a', 0, 0}, 1, std::nullopt).empty());
  CHECK_TRUE(make_query(1, Bytes{0xC0, 0x0C}, 1, std::nullopt).empty());
}

TEST(ErrorReply, IdHelpers) {
  Bytes b = query(1, "example.com");
  set_id(b, 0xCAFE);
  CHECK_EQUAL(0xCAFE, get_id(b));
  CHECK_EQUAL(0xCAFE, parse_header(b)->id);
  Bytes tiny{1, 2, 3};
  set_id(tiny, 0xFFFF);
  CHECK_BYTES((Bytes{1, 2, 3}), tiny);
  CHECK_EQUAL(0, get_id(Bytes{}));
}
