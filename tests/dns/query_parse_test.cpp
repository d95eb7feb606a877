// parse_query: every malformed shape a LAN client (or a fuzzer) can send,
// and the well-formed queries that must pass untouched.
#include <string>

#include "dns/message.hpp"
#include "packets.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::dns;
using namespace nxdns::dns::test;

namespace {

// A query whose question name is given as raw wire bytes.
Bytes query_with_name_bytes(const Bytes& name_bytes) {
  Bytes b = header(0x1234, 0x0100, 1, 0, 0, 0);
  append(b, name_bytes);
  u16(b, 1);
  u16(b, 1);
  return b;
}

ParseError error_of(const Bytes& b) {
  const QueryParse p = parse_query(b);
  // The invariant callers rely on: a query exactly when there is no error.
  CHECK_EQUAL(p.error == ParseError::none, p.query.has_value());
  return p.error;
}

Bytes label_bytes(std::size_t len, char c = 'a') {
  Bytes b;
  b.push_back(static_cast<std::uint8_t>(len));
  b.insert(b.end(), len, static_cast<std::uint8_t>(c));
  return b;
}

}  // namespace

TEST_GROUP(QueryParse){};

TEST(QueryParse, EmptyPacketIsTooShortWithoutHeader) {
  const QueryParse p = parse_query(Bytes{});
  CHECK_PARSE_ERROR(ParseError::too_short, p.error);
  CHECK_FALSE(p.header_readable);
}

TEST(QueryParse, ElevenBytesIsTooShort) {
  Bytes b = query(1, "example.com");
  b.resize(11);
  const QueryParse p = parse_query(b);
  CHECK_PARSE_ERROR(ParseError::too_short, p.error);
  CHECK_FALSE(p.header_readable);
}

TEST(QueryParse, HeaderOnlyIsTruncatedButHeaderReadable) {
  Bytes b = header(7, 0x0100, 1, 0, 0, 0);
  const QueryParse p = parse_query(b);
  CHECK_PARSE_ERROR(ParseError::truncated, p.error);
  CHECK_TRUE(p.header_readable);
}

TEST(QueryParse, QrSetIsNotAQuery) {
  Bytes b = query(1, "example.com");
  b[2] |= 0x80;
  const QueryParse p = parse_query(b);
  CHECK_PARSE_ERROR(ParseError::not_a_query, p.error);
  CHECK_TRUE(p.header_readable);
}

TEST(QueryParse, NonQueryOpcodeRejected) {
  for (unsigned opcode : {1u, 2u, 4u, 5u, 15u}) {
    Bytes b = query(1, "example.com");
    b[2] = static_cast<std::uint8_t>((b[2] & 0x87) | (opcode << 3));
    CHECK_PARSE_ERROR(ParseError::bad_opcode, error_of(b));
  }
}

TEST(QueryParse, ZeroQuestionsRejected) {
  Bytes b = header(1, 0x0100, 0, 0, 0, 0);
  CHECK_PARSE_ERROR(ParseError::bad_question_count, error_of(b));
}

TEST(QueryParse, TwoQuestionsRejected) {
  Bytes b = header(1, 0x0100, 2, 0, 0, 0);
  for (int i = 0; i < 2; ++i) {
    append(b, wname("example.com"));
    u16(b, 1);
    u16(b, 1);
  }
  CHECK_PARSE_ERROR(ParseError::bad_question_count, error_of(b));
}

TEST(QueryParse, QuestionTruncatedInsideName) {
  Bytes b = query(1, "example.com");
  b.resize(header_size + 5);  // inside "example"
  CHECK_PARSE_ERROR(ParseError::truncated, error_of(b));
}

TEST(QueryParse, QuestionTruncatedInsideTypeAndClass) {
  const Bytes full = query(1, "example.com");
  for (std::size_t cut = 1; cut <= 4; ++cut) {
    Bytes b(full.begin(), full.end() - static_cast<std::ptrdiff_t>(cut));
    CHECK_PARSE_ERROR(ParseError::truncated, error_of(b));
  }
}

TEST(QueryParse, Label63Accepted) {
  Bytes name = label_bytes(63);
  name.push_back(0);
  CHECK_PARSE_ERROR(ParseError::none, error_of(query_with_name_bytes(name)));
}

TEST(QueryParse, Label64Rejected) {
  Bytes name = label_bytes(64);
  name.push_back(0);
  CHECK_PARSE_ERROR(ParseError::label_too_long, error_of(query_with_name_bytes(name)));
}

TEST(QueryParse, Name255Accepted) {
  // 3 x (1+63) + (1+61) + root = 255
  Bytes name;
  for (int i = 0; i < 3; ++i) append(name, label_bytes(63));
  append(name, label_bytes(61));
  name.push_back(0);
  CHECK_EQUAL(255u, name.size());
  const QueryParse p = parse_query(query_with_name_bytes(name));
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  CHECK_BYTES(name, p.query->question.name);
}

TEST(QueryParse, Name256Rejected) {
  Bytes name;
  for (int i = 0; i < 3; ++i) append(name, label_bytes(63));
  append(name, label_bytes(62));
  name.push_back(0);
  CHECK_EQUAL(256u, name.size());
  CHECK_PARSE_ERROR(ParseError::name_too_long, error_of(query_with_name_bytes(name)));
}

TEST(QueryParse, ForwardPointerRejected) {
  // Question name is a pointer to offset 18, where a valid name sits.
  Bytes b = header(1, 0x0100, 1, 0, 0, 0);
  raw(b, {0xC0, 18, 0x00, 0x01, 0x00, 0x01});
  append(b, wname("x"));
  CHECK_PARSE_ERROR(ParseError::bad_pointer, error_of(b));
}

TEST(QueryParse, SelfPointerRejected) {
  CHECK_PARSE_ERROR(ParseError::bad_pointer, error_of(query_with_name_bytes(Bytes{0xC0, 0x0C})));
}

TEST(QueryParse, PointerIntoHeaderRejected) {
  CHECK_PARSE_ERROR(ParseError::bad_pointer, error_of(query_with_name_bytes(Bytes{0xC0, 0x04})));
}

TEST(QueryParse, PointerLoopRejected) {
  // Additional record at offset X whose owner is label "a" then a pointer
  // back to X: the pointer precedes itself, yet following it would loop.
  Bytes b = query(1, "example.com");
  b[11] = 1;  // arcount
  const std::size_t x = b.size();
  raw(b, {0x01, 'a', 0xC0, static_cast<std::uint8_t>(x)});
  raw(b, {0x00, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0x00, 0x00});
  CHECK_PARSE_ERROR(ParseError::bad_pointer, error_of(b));
}

TEST(QueryParse, TwoPointerLoopRejected) {
  // X: pointer to Y; Y: pointer to X. One of them must point forward.
  Bytes b = query(1, "example.com");
  b[11] = 1;
  const std::size_t x = b.size();
  raw(b, {0xC0, static_cast<std::uint8_t>(x + 12), 0x00, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0x00, 0x02});
  raw(b, {0xC0, static_cast<std::uint8_t>(x)});
  CHECK_PARSE_ERROR(ParseError::bad_pointer, error_of(b));
}

TEST(QueryParse, OutOfRangePointerRejected) {
  Bytes b = query(1, "example.com");
  b[11] = 1;
  raw(b, {0xFF, 0xFF, 0x00, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0x00, 0x00});
  CHECK_PARSE_ERROR(ParseError::bad_pointer, error_of(b));
}

TEST(QueryParse, PointerCutInHalfIsTruncated) {
  Bytes b = header(1, 0x0100, 1, 0, 0, 0);
  b.push_back(0xC0);
  CHECK_PARSE_ERROR(ParseError::truncated, error_of(b));
}

TEST(QueryParse, ExtendedLabelType0x40Rejected) {
  // 0x41 was the RFC 2673 bitstring label; as a length it would be 65.
  CHECK_PARSE_ERROR(ParseError::label_too_long, error_of(query_with_name_bytes(Bytes{0x41, 0x08, 0xAB, 0x00})));
}

TEST(QueryParse, ReservedLabelType0x80Rejected) {
  CHECK_PARSE_ERROR(ParseError::bad_label_type, error_of(query_with_name_bytes(Bytes{0x80, 0x00})));
  CHECK_PARSE_ERROR(ParseError::bad_label_type, error_of(query_with_name_bytes(Bytes{0xBF, 0x00})));
}

TEST(QueryParse, TwoOptsRejected) {
  Bytes b = query(1, "example.com", 1, true);
  b[11] = 2;
  append(b, opt_rr(1232, 0));
  CHECK_PARSE_ERROR(ParseError::bad_opt, error_of(b));
}

TEST(QueryParse, OptWithOptionsNotTilingRdataRejected) {
  Bytes b = query(1, "example.com");
  b[11] = 1;
  append(b, opt_rr(1232, 0, Bytes{0x00, 0x0A, 0x00}));  // 3 bytes: half an option header
  CHECK_PARSE_ERROR(ParseError::bad_opt, error_of(b));
}

TEST(QueryParse, OptOptionLengthPastRdataRejected) {
  Bytes b = query(1, "example.com");
  b[11] = 1;
  append(b, opt_rr(1232, 0, Bytes{0x00, 0x0A, 0x00, 0x08, 1, 2, 3, 4}));  // claims 8, has 4
  CHECK_PARSE_ERROR(ParseError::bad_opt, error_of(b));
}

TEST(QueryParse, OptRdlengthPastEndIsTruncated) {
  Bytes b = query(1, "example.com", 1, true);
  set16(b, b.size() - 2, 10);  // RDLENGTH 10, no RDATA follows
  CHECK_PARSE_ERROR(ParseError::truncated, error_of(b));
}

TEST(QueryParse, OptOwnerNotRootRejected) {
  Bytes b = query(1, "example.com");
  b[11] = 1;
  Bytes opt = opt_rr(1232, 0);
  opt.erase(opt.begin());
  append(b, wname("x"));
  append(b, opt);
  CHECK_PARSE_ERROR(ParseError::bad_opt, error_of(b));
}

TEST(QueryParse, TrailingGarbageRejected) {
  Bytes b = query(1, "example.com", 1, true);
  b.push_back(0);
  CHECK_PARSE_ERROR(ParseError::trailing_garbage, error_of(b));
}

TEST(QueryParse, AnswerRecordInQueryRejected) {
  Bytes b = query(1, "example.com");
  b[7] = 1;  // ancount
  append(b, a_rr(Bytes{0xC0, 0x0C}, 1));
  CHECK_PARSE_ERROR(ParseError::unexpected_records, error_of(b));
}

TEST(QueryParse, AuthorityRecordInQueryRejected) {
  Bytes b = query(1, "example.com");
  b[9] = 1;  // nscount
  append(b, a_rr(Bytes{0xC0, 0x0C}, 1));
  CHECK_PARSE_ERROR(ParseError::unexpected_records, error_of(b));
}

TEST(QueryParse, AdditionalCountBeyondPacketIsTruncated) {
  Bytes b = query(1, "example.com");
  set16(b, 10, 0xFFFF);
  CHECK_PARSE_ERROR(ParseError::truncated, error_of(b));
}

TEST(QueryParse, PlainQueryParses) {
  Bytes b = query(0xBEEF, "WwW.Example.COM", 28);
  const QueryParse p = parse_query(b);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  CHECK_TRUE(p.header_readable);
  const Query& q = *p.query;
  CHECK_EQUAL(0xBEEF, q.header.id);
  CHECK_TRUE(q.header.rd());
  CHECK_EQUAL(28, q.question.qtype);
  CHECK_EQUAL(1, q.question.qclass);
  CHECK_BYTES(wname("WwW.Example.COM"), q.question.name);  // case kept
  CHECK_FALSE(q.edns.present);
  CHECK_EQUAL(b.size(), q.question_end);
}

TEST(QueryParse, EdnsQueryParses) {
  Bytes b = query(5, "example.com");
  b[11] = 1;
  const std::size_t qend = b.size();
  // version 0, DO set, one cookie option
  append(b, opt_rr(4096, 0x00008000u, option(10, Bytes{1, 2, 3, 4, 5, 6, 7, 8})));
  const QueryParse p = parse_query(b);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  const Query& q = *p.query;
  CHECK_TRUE(q.edns.present);
  CHECK_EQUAL(4096, q.edns.udp_payload);
  CHECK_EQUAL(0, q.edns.version);
  CHECK_TRUE(q.edns.dnssec_ok);
  CHECK_EQUAL(qend, q.question_end);
}

TEST(QueryParse, EdnsVersionAndNoDo) {
  Bytes b = query(5, "example.com");
  b[11] = 1;
  append(b, opt_rr(512, 0x00010000u));
  const QueryParse p = parse_query(b);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  CHECK_EQUAL(1, p.query->edns.version);
  CHECK_FALSE(p.query->edns.dnssec_ok);
  CHECK_EQUAL(512, p.query->edns.udp_payload);
}

TEST(QueryParse, NonOptAdditionalWithCompressedOwnerTolerated) {
  Bytes b = query(5, "example.com", 1, true);
  b[11] = 2;
  append(b, a_rr(Bytes{0xC0, 0x0C}, 0x7F000001));
  const QueryParse p = parse_query(b);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  CHECK_TRUE(p.query->edns.present);
}

TEST(QueryParse, RootQuestionParses) {
  const QueryParse p = parse_query(query(9, "", 2));
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  CHECK_BYTES(Bytes{0}, p.query->question.name);
}

TEST(QueryParse, ClientUdpLimitClamps) {
  Edns e;
  CHECK_EQUAL(512u, client_udp_limit(e));
  e.present = true;
  e.udp_payload = 0;
  CHECK_EQUAL(512u, client_udp_limit(e));
  e.udp_payload = 511;
  CHECK_EQUAL(512u, client_udp_limit(e));
  e.udp_payload = 1000;
  CHECK_EQUAL(1000u, client_udp_limit(e));
  e.udp_payload = 1232;
  CHECK_EQUAL(1232u, client_udp_limit(e));
  e.udp_payload = 4096;
  CHECK_EQUAL(1232u, client_udp_limit(e));
}

TEST(QueryParse, EveryPrefixOfAValidQueryFailsCleanly) {
  Bytes b = query(5, "www.example.com", 1, true);
  for (std::size_t n = 0; n < b.size(); ++n) {
    const Bytes prefix(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
    const QueryParse p = parse_query(prefix);
    CHECK_TRUE(p.error != ParseError::none);
    CHECK_EQUAL(n >= header_size, p.header_readable);
  }
  CHECK_PARSE_ERROR(ParseError::none, error_of(b));
}

TEST(QueryParse, DescribeNamesEveryError) {
  STRCMP_EQUAL("bad compression pointer", describe(ParseError::bad_pointer));
  STRCMP_EQUAL("response ID does not match the query", describe(ResponseError::id_mismatch));
}
