// truncate_for_udp: what a UDP client receives when the answer is too big.
#include "dns/message.hpp"
#include "packets.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::dns;
using namespace nxdns::dns::test;

TEST_GROUP(Truncate){};

TEST(Truncate, FittingResponseUnchanged) {
  const Bytes r = response(1, "example.com", 1, 3);
  CHECK_BYTES(r, truncate_for_udp(r, 512));
  CHECK_BYTES(r, truncate_for_udp(r, r.size()));
}

TEST(Truncate, TooBigSetsTcAndKeepsQuestion) {
  const Bytes r = response(0x7777, "example.com", 1, 40);  // 29 + 40*16 = 669 octets
  CHECK_TRUE(r.size() > 512);
  const Bytes t = truncate_for_udp(r, 512);
  const auto h = parse_header(t);
  CHECK_TRUE(h->tc());
  CHECK_TRUE(h->qr());
  CHECK_TRUE(h->rd());
  CHECK_EQUAL(0x7777, h->id);
  CHECK_EQUAL(0, h->rcode());
  CHECK_EQUAL(1, h->qdcount);
  CHECK_EQUAL(0, h->ancount);
  CHECK_EQUAL(0, h->nscount);
  CHECK_EQUAL(0, h->arcount);
  const std::size_t question_end = 12 + wname("example.com").size() + 4;
  UNSIGNED_LONGS_EQUAL(question_end, t.size());
  MEMCMP_EQUAL(r.data() + 12, t.data() + 12, question_end - 12);
}

TEST(Truncate, OptKeptWhenPresent) {
  const Bytes opt = opt_rr(1232, 0x01008000u, option(10, Bytes(16, 0xAB)));  // ext rcode 1, DO
  const Bytes r = response(1, "example.com", 1, 40, &opt);
  const Bytes t = truncate_for_udp(r, 512);
  const auto h = parse_header(t);
  CHECK_TRUE(h->tc());
  CHECK_EQUAL(1, h->arcount);
  const std::size_t question_end = 12 + wname("example.com").size() + 4;
  const Bytes tail(t.begin() + static_cast<std::ptrdiff_t>(question_end), t.end());
  CHECK_BYTES(opt, tail);
  // The result is itself a walkable message: its keepalive lookup works.
  CHECK_FALSE(edns_tcp_keepalive(t).has_value());
}

TEST(Truncate, OptOptionsDroppedWhenOnlyFixedPartFits) {
  const Bytes opt = opt_rr(1232, 0x8000, option(12, Bytes(100, 0)));
  const Bytes r = response(1, "example.com", 1, 40, &opt);
  const std::size_t question_end = 12 + wname("example.com").size() + 4;
  const Bytes t = truncate_for_udp(r, question_end + 11 + 50);
  CHECK_EQUAL(1, parse_header(t)->arcount);
  const Bytes tail(t.begin() + static_cast<std::ptrdiff_t>(question_end), t.end());
  CHECK_BYTES(opt_rr(1232, 0x8000), tail);
}

TEST(Truncate, OptDroppedWhenNothingFits) {
  const Bytes opt = opt_rr(1232, 0);
  const Bytes r = response(1, "example.com", 1, 40, &opt);
  const std::size_t question_end = 12 + wname("example.com").size() + 4;
  const Bytes t = truncate_for_udp(r, question_end + 5);
  UNSIGNED_LONGS_EQUAL(question_end, t.size());
  CHECK_EQUAL(0, parse_header(t)->arcount);
}

TEST(Truncate, OwnTruncationFitsEveryLimit) {
  const Bytes opt = opt_rr(1232, 0, option(10, Bytes(24, 1)));
  const Bytes r = response(1, "example.com", 1, 60, &opt);
  for (std::size_t limit = 12; limit < r.size(); limit += 7) {
    const Bytes t = truncate_for_udp(r, limit);
    CHECK_TRUE(t.size() <= limit);
    CHECK_TRUE(parse_header(t)->tc());
  }
}

TEST(Truncate, MalformedRecordsStillGiveTcWithQuestion) {
  Bytes r = response(1, "example.com", 1, 40);
  r.resize(600);  // cut inside an answer; header still claims 40
  const Bytes t = truncate_for_udp(r, 512);
  const auto h = parse_header(t);
  CHECK_TRUE(h->tc());
  CHECK_EQUAL(1, h->qdcount);
  CHECK_EQUAL(0, h->arcount);
}

TEST(Truncate, MalformedQuestionGivesBareHeader) {
  Bytes r = header(3, 0x8180, 1, 0, 0, 0);
  raw(r, {0xC0, 0x0C});
  r.resize(700, 0);
  const Bytes t = truncate_for_udp(r, 512);
  UNSIGNED_LONGS_EQUAL(12, t.size());
  CHECK_TRUE(parse_header(t)->tc());
  CHECK_EQUAL(0, parse_header(t)->qdcount);
}

TEST(Truncate, UnreadableHeaderGivesNothing) {
  CHECK_TRUE(truncate_for_udp(Bytes(11, 0), 4).empty());
}
