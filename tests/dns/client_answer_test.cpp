// answer_for_client: the hop-by-hop rebuild of an answer's OPT (RFC 6891
// §6.1.1, §7) and UDP truncation, as one table; plus reply_rcode and the
// stream framing type. The header flags are in reply_flags_test.cpp, the
// local-answer policy in local_answer_test.cpp.
#include <optional>
#include <string>
#include <vector>

#include "dns/message.hpp"
#include "dns/stream_message.hpp"
#include "packets.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::dns;
using namespace nxdns::dns::test;

namespace {

constexpr std::uint32_t do_bit = 0x8000;

Query parsed(const Bytes& q) {
  const QueryParse p = parse_query(q);
  CHECK_TRUE(p.query.has_value());
  return *p.query;
}

// An independent reader: count OPT records, and the first one's fields and
// option codes, walking every record of a message with one question.
struct Seen {
  bool parsed = false;
  int opts = 0;
  std::uint16_t payload = 0;
  std::uint32_t ttl = 0;
  std::vector<std::uint16_t> codes;
  std::uint16_t arcount = 0;
  bool tc = false;
  std::uint8_t rcode = 0;
};
std::size_t skip_name(const Bytes& m, std::size_t off) {
  while (off < m.size()) {
    if ((m[off] & 0xC0) == 0xC0) return off + 2;
    if (m[off] == 0) return off + 1;
    off += 1 + m[off];
  }
  return m.size() + 1;
}
Seen read(const Bytes& m) {
  Seen s;
  if (m.size() < 12) return s;
  s.tc = (m[2] & 0x02) != 0;
  s.rcode = m[3] & 0x0F;
  s.arcount = get16(m, 10);
  const unsigned records = unsigned{get16(m, 6)} + get16(m, 8) + get16(m, 10);
  std::size_t off = 12;
  for (unsigned i = 0; i < get16(m, 4); ++i) off = skip_name(m, off) + 4;
  for (unsigned i = 0; i < records; ++i) {
    off = skip_name(m, off);
    if (off + 10 > m.size()) return s;
    const std::uint16_t type = get16(m, off);
    const std::size_t rdlen = get16(m, off + 8);
    if (type == 41) {
      if (s.opts++ == 0) {
        s.payload = get16(m, off + 2);
        s.ttl = (std::uint32_t{get16(m, off + 4)} << 16) | get16(m, off + 6);
        for (std::size_t p = off + 10; p + 4 <= off + 10 + rdlen; p += 4 + get16(m, p + 2)) s.codes.push_back(get16(m, p));
      }
    }
    off += 10 + rdlen;
  }
  s.parsed = off == m.size();
  return s;
}

bool has_code(const Seen& s, std::uint16_t code) {
  for (auto c : s.codes)
    if (c == code) return true;
  return false;
}

// Upstream OPT rdata with keepalive, padding, client subnet, a cookie, an
// NSID, an unknown option and an Extended DNS Error.
Bytes hop_options() {
  Bytes r;
  append(r, option(opt_tcp_keepalive, Bytes{0x00, 0x64}));
  append(r, option(opt_cookie, Bytes(16, 0xAB)));  // our (or another client's) cookie
  append(r, option(opt_client_subnet, Bytes{0, 1, 24, 0, 192, 0, 2}));
  append(r, option(opt_nsid, Bytes{'u', 'p'}));
  append(r, option(opt_extended_error, Bytes{0, 18}));  // EDE 18, Prohibited
  append(r, option(65001, Bytes{1}));
  append(r, option(opt_padding, Bytes(40, 0)));
  return r;
}

const ClientLink tcp{false, 0};
ClientLink udp(std::size_t limit) { return ClientLink{true, limit}; }

}  // namespace

TEST_GROUP(ClientAnswer){};

TEST(ClientAnswer, NoOptInQueryMeansNoneInAnswer) {
  const Bytes q = query(7, "a.example", 1, false);
  const Bytes opt = opt_rr(4096, 0, hop_options());
  const Bytes up = response(7, "a.example", 1, 2, &opt);
  for (const ClientLink& link : {udp(512), tcp}) {
    const auto out = answer_for_client(up, parsed(q), link);
    CHECK_TRUE(out.has_value());
    const Seen s = read(*out);
    CHECK_TRUE(s.parsed);
    CHECK_EQUAL(0, s.opts);
    CHECK_EQUAL(0, s.arcount);
    // The records are byte-identical: the OPT was last, nothing moved;
    // only ARCOUNT changed.
    Bytes expected(up.begin(), up.end() - static_cast<std::ptrdiff_t>(opt.size()));
    set16(expected, 10, 0);
    CHECK_BYTES(expected, *out);
  }
}

TEST(ClientAnswer, OnlyExtendedDnsErrorsReachTheClientPayloadOurs) {
  const Bytes q = query(7, "a.example", 1, true, 4096);
  const Bytes up = response(7, "a.example", 1, 1, nullptr);
  Bytes with_opt = up;
  append(with_opt, opt_rr(4096, 0, hop_options()));
  set16(with_opt, 10, 1);
  const auto out = answer_for_client(with_opt, parsed(q), tcp);
  CHECK_TRUE(out.has_value());
  const Seen s = read(*out);
  CHECK_TRUE(s.parsed);
  CHECK_EQUAL(1, s.opts);
  CHECK_EQUAL(max_udp_limit, s.payload);
  CHECK_FALSE(has_code(s, opt_tcp_keepalive));
  CHECK_FALSE(has_code(s, opt_padding));
  CHECK_FALSE(has_code(s, opt_client_subnet));
  CHECK_FALSE(has_code(s, opt_cookie));
  CHECK_FALSE(has_code(s, opt_nsid));
  CHECK_FALSE(has_code(s, 65001));
  CHECK_EQUAL(1u, s.codes.size());
  CHECK_TRUE(has_code(s, opt_extended_error));
}

TEST(ClientAnswer, ExtendedRcodeAndDoKeptOtherZBitsAndVersionCleared) {
  const Bytes q = query(7, "a.example", 1, true);
  // ext-rcode 1 (with header 7 -> rcode 23 BADCOOKIE), version 3, DO, Z bit 0x0001.
  const Bytes opt = opt_rr(1400, (1u << 24) | (3u << 16) | do_bit | 0x0001u);
  Bytes up = response(7, "a.example", 1, 0, &opt);
  up[3] = static_cast<std::uint8_t>((up[3] & 0xF0) | 7);
  const auto out = answer_for_client(up, parsed(q), udp(1232));
  CHECK_TRUE(out.has_value());
  const Seen s = read(*out);
  CHECK_EQUAL(1, s.opts);
  UNSIGNED_LONGS_EQUAL((1u << 24) | do_bit, s.ttl);
  CHECK_EQUAL(23, *reply_rcode(*out));
}

TEST(ClientAnswer, UpstreamWithoutOptGetsOursWithClientsDo) {
  Bytes q = query(7, "a.example", 1, false);
  append(q, opt_rr(1232, do_bit));
  set16(q, 10, 1);
  const Bytes up = response(7, "a.example", 1, 1);
  const auto out = answer_for_client(up, parsed(q), udp(1232));
  CHECK_TRUE(out.has_value());
  const Seen s = read(*out);
  CHECK_TRUE(s.parsed);
  CHECK_EQUAL(1, s.opts);
  CHECK_EQUAL(max_udp_limit, s.payload);
  UNSIGNED_LONGS_EQUAL(do_bit, s.ttl);
}

TEST(ClientAnswer, ExtendedRcodeForClientWithoutOptIsNotRelayable) {
  const Bytes q = query(7, "a.example", 1, false);
  const Bytes opt = opt_rr(1232, 1u << 24);  // BADVERS
  const Bytes up = response(7, "a.example", 1, 0, &opt);
  CHECK_FALSE(answer_for_client(up, parsed(q), udp(512)).has_value());
}

TEST(ClientAnswer, MalformedUpstreamOptIsNotRelayed) {
  const Bytes q = query(7, "a.example", 1, true);
  // Options that do not tile RDATA.
  const Bytes bad_tiling = opt_rr(1232, 0, Bytes{0, 11, 0, 9, 1});
  CHECK_FALSE(answer_for_client(response(7, "a.example", 1, 1, &bad_tiling), parsed(q), tcp).has_value());
  // Two OPT records.
  Bytes two = response(7, "a.example", 1, 1);
  append(two, opt_rr(1232, 0));
  append(two, opt_rr(1232, 0));
  set16(two, 10, 2);
  CHECK_FALSE(answer_for_client(two, parsed(q), tcp).has_value());
  // OPT not owned by the root.
  Bytes owned = response(7, "a.example", 1, 1);
  append(owned, Bytes{0xC0, 0x0C});
  const Bytes tail = opt_rr(1232, 0);
  owned.insert(owned.end(), tail.begin() + 1, tail.end());
  set16(owned, 10, 1);
  CHECK_FALSE(answer_for_client(owned, parsed(q), tcp).has_value());
  // Records that do not walk (arcount says one more than there is).
  Bytes short_count = response(7, "a.example", 1, 1);
  set16(short_count, 10, 1);
  CHECK_FALSE(answer_for_client(short_count, parsed(q), tcp).has_value());
}

TEST(ClientAnswer, RecordsAfterOptWithPointersAreDroppedAndResultParses) {
  // Additional section: OPT, then an A record for a name that a second A
  // record compresses against: moving them would break the pointer.
  const Bytes q = query(7, "a.example", 1, true);
  Bytes up = header(7, 0x8180, 1, 1, 0, 3);
  append(up, wname("a.example"));
  u16(up, 1);
  u16(up, 1);
  append(up, a_rr(Bytes{0xC0, 0x0C}, 0x01020304));
  append(up, opt_rr(1232, do_bit, option(opt_padding, Bytes(30, 0))));
  const std::size_t glue_at = up.size();
  append(up, a_rr(wname("ns.a.example"), 0x05060708));
  append(up, a_rr(Bytes{0xC0, static_cast<std::uint8_t>(glue_at)}, 0x05060709));
  for (bool edns : {true, false}) {
    const auto out = answer_for_client(up, parsed(query(7, "a.example", 1, edns)), tcp);
    CHECK_TRUE(out.has_value());
    const Seen s = read(*out);
    CHECK_TRUE(s.parsed);
    CHECK_EQUAL(edns ? 1 : 0, s.opts);
    CHECK_EQUAL(edns ? 1 : 0, s.arcount);
    CHECK_TRUE(parse_question_of(*out).has_value());
  }
  (void)q;
}

TEST(ClientAnswer, RecordsBeforeOptKeptByteIdentical) {
  const Bytes q = query(7, "a.example", 1, true);
  Bytes up = header(7, 0x8180, 1, 1, 0, 2);
  append(up, wname("a.example"));
  u16(up, 1);
  u16(up, 1);
  append(up, a_rr(Bytes{0xC0, 0x0C}, 0x01020304));
  append(up, a_rr(Bytes{0xC0, 0x0C}, 0x05060708));  // additional, before the OPT
  const std::size_t before_opt = up.size();
  append(up, opt_rr(1232, 0, option(opt_tcp_keepalive, Bytes{0, 1})));
  const auto out = answer_for_client(up, parsed(q), tcp);
  CHECK_TRUE(out.has_value());
  MEMCMP_EQUAL(up.data() + 12, out->data() + 12, before_opt - 12);
  const Seen s = read(*out);
  CHECK_EQUAL(2, s.arcount);
  CHECK_EQUAL(1, s.opts);
  CHECK_TRUE(s.codes.empty());
}

TEST(ClientAnswer, TruncationFollowsTheSameRule) {
  const Bytes opt = opt_rr(4096, do_bit, option(opt_tcp_keepalive, Bytes{0, 1}));
  const Bytes big = response(7, "a.example", 1, 60, &opt);  // > 512 octets
  CHECK_TRUE(big.size() > 900);
  // No EDNS: 512, TC, no OPT.
  auto out = answer_for_client(big, parsed(query(7, "a.example", 1, false)), udp(512));
  CHECK_TRUE(out.has_value());
  Seen s = read(*out);
  CHECK_TRUE(s.tc);
  CHECK_EQUAL(0, s.opts);
  CHECK_TRUE(out->size() <= 512);
  // EDNS 1232: TC beyond 1232... this one fits 1232? 60 x 16 + ~40: no, truncated.
  out = answer_for_client(big, parsed(query(7, "a.example", 1, true, 600)), udp(600));
  CHECK_TRUE(out.has_value());
  s = read(*out);
  CHECK_TRUE(s.tc);
  CHECK_EQUAL(1, s.opts);
  CHECK_TRUE(s.codes.empty());
  CHECK_EQUAL(max_udp_limit, s.payload);
  // TCP: whole.
  out = answer_for_client(big, parsed(query(7, "a.example", 1, false)), tcp);
  CHECK_TRUE(out.has_value());
  CHECK_FALSE(read(*out).tc);
}

TEST(ClientAnswer, TooBigForAStreamIsNotRelayedOverTcp) {
  const Bytes q = query(7, "a.example", 1, false);
  const Bytes huge = response(7, "a.example", 1, 4200);  // 16 x 4200 > 65535
  CHECK_TRUE(huge.size() > max_stream_message);
  CHECK_FALSE(answer_for_client(huge, parsed(q), tcp).has_value());
  const auto over_udp = answer_for_client(huge, parsed(q), udp(512));
  CHECK_TRUE(over_udp.has_value());
  CHECK_TRUE(read(*over_udp).tc);
}

TEST(ClientAnswer, OwnErrorRepliesPassUnchanged) {
  for (bool edns : {false, true}) {
    const Bytes q = query(9, "b.example", 28, edns);
    const Bytes sf = make_error_reply(q, parsed(q), Rcode::servfail);
    const auto out = answer_for_client(sf, parsed(q), udp(512));
    CHECK_TRUE(out.has_value());
    CHECK_BYTES(sf, *out);
  }
}

TEST(ClientAnswer, ReplyRcodeIsTwelveBits) {
  const Bytes q = query(9, "b.example", 1, true);
  const Bytes badvers = make_error_reply(q, parsed(q), Rcode::badvers);
  CHECK_EQUAL(16, *reply_rcode(badvers));
  CHECK_EQUAL(0, badvers[3] & 0x0F);  // header says 0: only the OPT tells
  CHECK_EQUAL(2, *reply_rcode(make_error_reply(q, parsed(q), Rcode::servfail)));
  CHECK_FALSE(reply_rcode(Bytes{1, 2, 3}).has_value());
}

TEST(ClientAnswer, BadversWithoutOptBecomesServfail) {
  const Bytes q = query(9, "b.example", 1, false);
  const Bytes r = make_error_reply(q, parsed(q), Rcode::badvers);
  CHECK_EQUAL(2, r[3] & 0x0F);
  CHECK_EQUAL(0, get16(r, 10));
}

TEST_GROUP(SizeCaps){};

TEST(SizeCaps, QueryOverTheCapIsTooLargeWhateverItHolds) {
  // A valid query whose OPT carries a big option: parses at the cap, not one
  // octet above.
  const Bytes base = query(1, "a.example", 1, false);
  auto with_option = [&](std::size_t total) {
    Bytes q = base;
    const std::size_t data = total - q.size() - 11 - 4;
    append(q, opt_rr(1232, 0, option(65001, Bytes(data, 0x11))));
    set16(q, 10, 1);
    CHECK_EQUAL(total, q.size());
    return q;
  };
  CHECK_PARSE_ERROR(ParseError::none, parse_query(with_option(max_client_query)).error);
  const QueryParse over = parse_query(with_option(max_client_query + 1));
  CHECK_PARSE_ERROR(ParseError::too_large, over.error);
  CHECK_TRUE(over.header_readable);
  // The field defect: ~65,400 octets would have become a 65,536-octet
  // upstream message. Now it is refused before anything is built.
  CHECK_TRUE(prepare_upstream_query(with_option(65400)).empty());
  CHECK_FALSE(make_formerr(with_option(65400)).empty());
}

TEST(SizeCaps, UpstreamQueryAtTheCapStaysFramable) {
  Bytes q = query(1, "a.example", 1, false);
  append(q, opt_rr(1232, 0, option(65001, Bytes(max_client_query - q.size() - 15, 0))));
  set16(q, 10, 1);
  UpstreamQueryOptions o;
  o.tcp_keepalive = true;
  const Bytes up = prepare_upstream_query(q, o);
  CHECK_FALSE(up.empty());
  CHECK_TRUE(up.size() <= 2 * 128);  // the question and our OPT, padded: the client's option stays here
  CHECK_TRUE(StreamMessage::from(up).has_value());
}

TEST(SizeCaps, StreamMessageRefusesWhatThePrefixCannotState) {
  CHECK_FALSE(StreamMessage::from(Bytes{}).has_value());
  CHECK_FALSE(StreamMessage::from(Bytes(65536, 0)).has_value());
  CHECK_FALSE(StreamMessage::from(Bytes(100000, 0)).has_value());
  auto m = StreamMessage::from(Bytes(65535, 7));
  CHECK_TRUE(m.has_value());
  CHECK_EQUAL(0xFF, m->prefix()[0]);
  CHECK_EQUAL(0xFF, m->prefix()[1]);
  auto small = StreamMessage::from(Bytes(300, 1));
  CHECK_EQUAL(1, small->prefix()[0]);
  CHECK_EQUAL(44, small->prefix()[1]);
  CHECK_EQUAL(300u, std::move(*small).release().size());
}

TEST(SizeCaps, ClientSubnetAndCookieNeverGoUpstream) {
  Bytes q = query(1, "a.example", 1, false);
  Bytes opts = option(opt_client_subnet, Bytes{0, 1, 24, 0, 10, 1, 2});
  append(opts, option(opt_cookie, Bytes(8, 0x42)));
  append(q, opt_rr(1232, 0, opts));
  set16(q, 10, 1);
  UpstreamQueryOptions o;
  o.pad_block = 0;
  const Bytes up = prepare_upstream_query(q, o);
  const Seen s = read(up);
  CHECK_EQUAL(1, s.opts);
  CHECK_FALSE(has_code(s, opt_client_subnet));
  CHECK_FALSE(has_code(s, opt_cookie));
}
