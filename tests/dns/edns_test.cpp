// EDNS for the encrypted transports: the upstream query rewrite (padding,
// keepalive), the keepalive read-back, and padding removal from responses.
#include <string>
#include <utility>
#include <vector>

#include "dns/message.hpp"
#include "packets.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::dns;
using namespace nxdns::dns::test;

namespace {

struct OptSeen {
  bool found = false;
  std::uint16_t payload = 0;
  std::uint32_t ttl = 0;
  std::vector<std::pair<std::uint16_t, Bytes>> options;
};

// Independent reader for the test: the OPT of a message built as header +
// one uncompressed question + exactly one OPT (what prepare emits).
OptSeen read_single_opt(const Bytes& m) {
  OptSeen s;
  std::size_t off = 12;
  while (off < m.size() && m[off] != 0) off += 1 + m[off];
  off += 1 + 4;
  if (off + 11 > m.size() || m[off] != 0 || get16(m, off + 1) != 41) return s;
  s.found = true;
  s.payload = get16(m, off + 3);
  s.ttl = (static_cast<std::uint32_t>(get16(m, off + 5)) << 16) | get16(m, off + 7);
  const std::size_t rdlen = get16(m, off + 9);
  std::size_t p = off + 11;
  const std::size_t end = p + rdlen;
  CHECK_EQUAL(m.size(), end);
  while (p + 4 <= end) {
    const std::uint16_t code = get16(m, p), len = get16(m, p + 2);
    s.options.emplace_back(code, Bytes(m.begin() + static_cast<std::ptrdiff_t>(p + 4),
                                       m.begin() + static_cast<std::ptrdiff_t>(p + 4 + len)));
    p += 4 + len;
  }
  CHECK_EQUAL(end, p);
  return s;
}

int count_code(const OptSeen& s, std::uint16_t code) {
  int n = 0;
  for (const auto& o : s.options) n += o.first == code;
  return n;
}

}  // namespace

TEST_GROUP(UpstreamQuery){};

TEST(UpstreamQuery, AddsOptAndPadsTo128) {
  const Bytes client = query(0x1234, "www.example.com");
  UpstreamQueryOptions o;
  o.id = 0;
  const Bytes up = prepare_upstream_query(client, o);
  UNSIGNED_LONGS_EQUAL(128, up.size());
  const QueryParse p = parse_query(up);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  CHECK_EQUAL(0, p.query->header.id);
  CHECK_TRUE(p.query->header.rd());
  CHECK_EQUAL(1, p.query->header.arcount);
  CHECK_TRUE(p.query->edns.present);
  CHECK_EQUAL(1232, p.query->edns.udp_payload);
  CHECK_EQUAL(0, p.query->edns.version);
  CHECK_BYTES(wname("www.example.com"), p.query->question.name);
  const OptSeen s = read_single_opt(up);
  CHECK_TRUE(s.found);
  CHECK_EQUAL(1, count_code(s, 12));
  for (std::uint8_t b : s.options.back().second) CHECK_EQUAL(0, b);
}

TEST(UpstreamQuery, PaddingIsAMultipleForManyNameLengths) {
  for (std::size_t len = 1; len <= 63; ++len) {
    const std::string name = std::string(len, 'q') + ".example";
    for (std::size_t block : {128u, 468u, 17u}) {
      UpstreamQueryOptions o;
      o.pad_block = block;
      o.tcp_keepalive = len % 2 == 0;
      const Bytes up = prepare_upstream_query(query(1, name, 1, len % 3 == 0), o);
      CHECK_FALSE(up.empty());
      UNSIGNED_LONGS_EQUAL(0, up.size() % block);
      CHECK_PARSE_ERROR(ParseError::none, parse_query(up).error);
    }
  }
}

TEST(UpstreamQuery, ExactMultipleGetsEmptyPaddingOption) {
  // Find the name length whose unpadded size + 4 is exactly 128: then the
  // padding option is present but carries no octets.
  for (std::size_t len = 1; len <= 63; ++len) {
    const Bytes client = query(1, std::string(len, 'z') + "." + std::string(40, 'y') + ".example.net");
    UpstreamQueryOptions none;
    none.pad_block = 0;
    const Bytes unpadded = prepare_upstream_query(client, none);
    if (unpadded.size() + 4 != 128) continue;
    const Bytes up = prepare_upstream_query(client, UpstreamQueryOptions{});
    UNSIGNED_LONGS_EQUAL(128, up.size());
    const OptSeen s = read_single_opt(up);
    CHECK_EQUAL(12, s.options.back().first);
    CHECK_TRUE(s.options.back().second.empty());
    return;
  }
  FAIL("no name length produced an exact fit");
}

TEST(UpstreamQuery, NoPaddingWhenBlockZero) {
  UpstreamQueryOptions o;
  o.pad_block = 0;
  const Bytes client = query(5, "example.com");
  const Bytes up = prepare_upstream_query(client, o);
  // client + an empty OPT
  UNSIGNED_LONGS_EQUAL(client.size() + 11, up.size());
  CHECK_EQUAL(0u, read_single_opt(up).options.size());
}

TEST(UpstreamQuery, KeepaliveAddedEmpty) {
  UpstreamQueryOptions o;
  o.tcp_keepalive = true;
  const Bytes up = prepare_upstream_query(query(5, "example.com"), o);
  const OptSeen s = read_single_opt(up);
  CHECK_EQUAL(1, count_code(s, 11));
  for (const auto& opt : s.options) {
    if (opt.first == 11) CHECK_TRUE(opt.second.empty());
  }
  UNSIGNED_LONGS_EQUAL(0, up.size() % 128);
}

// Every option a client may attach, the end-to-end ones included.
Bytes every_client_option() {
  Bytes rdata = option(opt_cookie, Bytes{1, 2, 3, 4, 5, 6, 7, 8});  // RFC 7873: identifies the device
  append(rdata, option(opt_nsid, Bytes{}));                          // RFC 5001: asks for an NSID back
  append(rdata, option(opt_padding, Bytes(30, 0)));                  // the client's hop
  append(rdata, option(opt_tcp_keepalive, Bytes{0, 50}));            // the client's hop
  append(rdata, option(opt_client_subnet, Bytes{0, 1, 24, 0, 192, 0, 2}));
  append(rdata, option(9, Bytes{}));                                 // EXPIRE (RFC 7314)
  append(rdata, option(65001, Bytes{0xAB}));                         // unknown
  return rdata;
}

TEST(UpstreamQuery, HeaderIsBuiltFromAnAllowlist) {
  // RD and AD always set, CD the client's, AA, TC and Z never: whatever the
  // client's header said.
  struct Row {
    std::uint16_t client_flags;
    std::uint16_t upstream_flags;
  };
  const Row rows[] = {
      {0x0100, 0x0120},  // RD
      {0x0000, 0x0120},  // RD clear (dig +norec): asked with RD all the same
      {0x0110, 0x0130},  // CD kept
      {0x0010, 0x0130},
      {0x0120, 0x0120},  // AD
      {0x0500, 0x0120},  // AA
      {0x0140, 0x0120},  // Z
      {0x0770, 0x0130},  // everything a query can carry
  };
  for (const Row& r : rows) {
    for (const bool edns : {false, true}) {
      Bytes client = query(0x4444, "example.com", 1, edns);
      set16(client, 2, r.client_flags);
      const Bytes up = prepare_upstream_query(client, UpstreamQueryOptions{});
      CHECK_FALSE(up.empty());
      CHECK_EQUAL(r.upstream_flags, get16(up, 2));
    }
  }
}

TEST(UpstreamQuery, OptCarriesTheClientsDoAndOurOptionsOnly) {
  for (const bool dnssec_ok : {false, true}) {
    Bytes client = query(0x4444, "example.com");
    client[11] = 1;
    // Payload 4096, ext-rcode 5 (junk), version 0, DO, a Z bit.
    append(client, opt_rr(4096, 0x05000000u | (dnssec_ok ? 0x8000u : 0u) | 0x0001u, every_client_option()));
    UpstreamQueryOptions o;
    o.id = 0x9999;
    o.tcp_keepalive = true;
    const Bytes up = prepare_upstream_query(client, o);
    const QueryParse p = parse_query(up);
    CHECK_PARSE_ERROR(ParseError::none, p.error);
    CHECK_EQUAL(0x9999, p.query->header.id);
    const OptSeen s = read_single_opt(up);
    CHECK_EQUAL(max_udp_limit, s.payload);
    CHECK_EQUAL(dnssec_ok ? 0x8000u : 0u, s.ttl);
    // Our keepalive (empty, as a client sends it), then our padding.
    CHECK_EQUAL(2u, s.options.size());
    CHECK_EQUAL(opt_tcp_keepalive, s.options[0].first);
    CHECK_TRUE(s.options[0].second.empty());
    CHECK_EQUAL(opt_padding, s.options[1].first);
    UNSIGNED_LONGS_EQUAL(0, up.size() % 128);
  }
}

TEST(UpstreamQuery, ClientsWithOneCacheKeyAskTheSameExchange) {
  // A plain stub, dig +norec, and a client with every option, AD and a big
  // payload: what the upstream sees is identical, so one answer (cached or
  // in flight) is right for each of them.
  Bytes plain = query(1, "example.com", 28, false);
  Bytes norec = query(2, "example.com", 28, true);
  set16(norec, 2, 0x0000);
  Bytes loaded = query(3, "example.com", 28, false);
  set16(loaded, 2, 0x0120);
  loaded[11] = 1;
  append(loaded, opt_rr(4096, 0, every_client_option()));
  UpstreamQueryOptions o;
  o.tcp_keepalive = true;
  const Bytes want = prepare_upstream_query(plain, o);
  CHECK_BYTES(want, prepare_upstream_query(norec, o));
  CHECK_BYTES(want, prepare_upstream_query(loaded, o));
  // DO and CD are the key's own bits: they do change the exchange.
  Bytes with_do = query(1, "example.com", 28, false);
  with_do[11] = 1;
  append(with_do, opt_rr(1232, 0x8000));
  CHECK_FALSE(want == prepare_upstream_query(with_do, o));
  Bytes with_cd = plain;
  set16(with_cd, 2, 0x0110);
  CHECK_FALSE(want == prepare_upstream_query(with_cd, o));
}

TEST(UpstreamQuery, DropsNonOptAdditionalRecords) {
  Bytes client = query(5, "example.com", 1, true);
  client[11] = 2;
  append(client, a_rr(Bytes{0xC0, 0x0C}, 1));
  UpstreamQueryOptions o;
  o.pad_block = 0;
  const Bytes up = prepare_upstream_query(client, o);
  CHECK_EQUAL(1, parse_header(up)->arcount);
  const Bytes expected_prefix(client.begin() + 12, client.begin() + static_cast<std::ptrdiff_t>(12 + 13 + 4));
  MEMCMP_EQUAL(expected_prefix.data(), up.data() + 12, expected_prefix.size());
  UNSIGNED_LONGS_EQUAL(12 + 13 + 4 + 11, up.size());
}

TEST(UpstreamQuery, RejectsWhatParseRejects) {
  CHECK_TRUE(prepare_upstream_query(Bytes{}, {}).empty());
  Bytes resp = response(1, "example.com", 1, 1);
  CHECK_TRUE(prepare_upstream_query(resp, {}).empty());
  Bytes two_opts = query(1, "example.com", 1, true);
  two_opts[11] = 2;
  append(two_opts, opt_rr(512, 0));
  CHECK_TRUE(prepare_upstream_query(two_opts, {}).empty());
}

TEST(UpstreamQuery, HugeBlockOmitsPaddingRatherThanOverflow) {
  UpstreamQueryOptions o;
  o.pad_block = 100000;
  const Bytes up = prepare_upstream_query(query(1, "example.com"), o);
  CHECK_FALSE(up.empty());
  CHECK_EQUAL(0, count_code(read_single_opt(up), 12));
}

TEST_GROUP(EdnsResponse){};

TEST(EdnsResponse, KeepaliveTimeoutRead) {
  const Bytes opt = opt_rr(1232, 0, option(11, Bytes{0x01, 0x2C}));
  const Bytes r = response(1, "example.com", 1, 2, &opt);
  const auto t = edns_tcp_keepalive(r);
  CHECK_TRUE(t.has_value());
  CHECK_EQUAL(300, *t);
}

TEST(EdnsResponse, KeepaliveAfterOtherOptions) {
  Bytes rdata = option(12, Bytes(20, 0));
  append(rdata, option(11, Bytes{0x00, 0x05}));
  const Bytes opt = opt_rr(1232, 0, rdata);
  const auto t = edns_tcp_keepalive(response(1, "example.com", 1, 0, &opt));
  CHECK_TRUE(t.has_value());
  CHECK_EQUAL(5, *t);
}

TEST(EdnsResponse, KeepaliveAbsentOrWrongLength) {
  CHECK_FALSE(edns_tcp_keepalive(response(1, "example.com", 1, 2)).has_value());
  const Bytes empty_ka = opt_rr(1232, 0, option(11, Bytes{}));
  CHECK_FALSE(edns_tcp_keepalive(response(1, "example.com", 1, 0, &empty_ka)).has_value());
  const Bytes long_ka = opt_rr(1232, 0, option(11, Bytes{0, 1, 2}));
  CHECK_FALSE(edns_tcp_keepalive(response(1, "example.com", 1, 0, &long_ka)).has_value());
  CHECK_FALSE(edns_tcp_keepalive(Bytes{1, 2}).has_value());
}

TEST(EdnsResponse, KeepaliveInMalformedOptIgnored) {
  Bytes rdata = option(11, Bytes{0x00, 0x05});
  rdata.push_back(0x00);  // stray octet: options do not tile
  const Bytes opt = opt_rr(1232, 0, rdata);
  CHECK_FALSE(edns_tcp_keepalive(response(1, "example.com", 1, 0, &opt)).has_value());
}

TEST(EdnsResponse, StripPaddingRemovesOnlyPadding) {
  Bytes rdata = option(10, Bytes(16, 7));
  append(rdata, option(12, Bytes(40, 0)));
  append(rdata, option(11, Bytes{0, 9}));
  const Bytes opt = opt_rr(1232, 0x8000, rdata);
  const Bytes r = response(0x3030, "example.com", 1, 3, &opt);

  Bytes want_rdata = option(10, Bytes(16, 7));
  append(want_rdata, option(11, Bytes{0, 9}));
  const Bytes want_opt = opt_rr(1232, 0x8000, want_rdata);
  const Bytes want = response(0x3030, "example.com", 1, 3, &want_opt);

  const Bytes got = strip_padding(r);
  CHECK_BYTES(want, got);
  const auto ka = edns_tcp_keepalive(got);
  CHECK_TRUE(ka.has_value());
  CHECK_EQUAL(9, *ka);
}

TEST(EdnsResponse, StripPaddingOnlyOption) {
  const Bytes opt = opt_rr(1232, 0, option(12, Bytes(100, 0)));
  const Bytes empty_opt = opt_rr(1232, 0);
  CHECK_BYTES(response(1, "a.b", 1, 1, &empty_opt), strip_padding(response(1, "a.b", 1, 1, &opt)));
}

TEST(EdnsResponse, StripPaddingUnchangedCases) {
  const Bytes no_opt = response(1, "example.com", 1, 2);
  CHECK_BYTES(no_opt, strip_padding(no_opt));
  const Bytes cookie = opt_rr(1232, 0, option(10, Bytes(8, 1)));
  const Bytes no_pad = response(1, "example.com", 1, 2, &cookie);
  CHECK_BYTES(no_pad, strip_padding(no_pad));
  Bytes malformed = response(1, "example.com", 1, 2);
  malformed.resize(malformed.size() - 3);
  CHECK_BYTES(malformed, strip_padding(malformed));
  CHECK_BYTES(Bytes{5}, strip_padding(Bytes{5}));
}

TEST(EdnsResponse, StripPaddingLeavesOptFollowedByRecords) {
  // OPT, then an A record: removing bytes could redirect pointers after it.
  const Bytes pad = opt_rr(1232, 0, option(12, Bytes(10, 0)));
  Bytes r = response(1, "example.com", 1, 0, &pad);
  set16(r, 10, 2);
  append(r, a_rr(Bytes{0xC0, 0x0C}, 1));
  CHECK_BYTES(r, strip_padding(r));
}

TEST(EdnsResponse, StripPaddingSkipsCompressedNamesInAllSections) {
  // answer with compressed owner, authority with a longer compressed name,
  // additional glue, then OPT with padding.
  Bytes r = header(2, 0x8180, 1, 1, 1, 2);
  append(r, wname("www.example.com"));
  u16(r, 1);
  u16(r, 1);
  append(r, a_rr(Bytes{0xC0, 0x0C}, 1));
  Bytes ns_owner{0xC0, 16};  // example.com
  append(r, ns_owner);
  u16(r, 2);
  u16(r, 1);
  u32(r, 60);
  u16(r, 6);
  raw(r, {3, 'n', 's', '1', 0xC0, 16});
  append(r, a_rr(Bytes{3, 'n', 's', '1', 0xC0, 16}, 2));
  const std::size_t before_opt = r.size();
  append(r, opt_rr(1232, 0, option(12, Bytes(33, 0))));
  const Bytes got = strip_padding(r);
  UNSIGNED_LONGS_EQUAL(before_opt + 11, got.size());
  MEMCMP_EQUAL(r.data(), got.data(), before_opt);
  CHECK_EQUAL(0, get16(got, got.size() - 2));  // RDLENGTH now 0
}

TEST(EdnsResponse, PreparedQueryStripsBackToUnpadded) {
  UpstreamQueryOptions pad;
  UpstreamQueryOptions nopad;
  nopad.pad_block = 0;
  const Bytes client = query(3, "roundtrip.example", 1, true);
  CHECK_BYTES(prepare_upstream_query(client, nopad), strip_padding(prepare_upstream_query(client, pad)));
}

// Found by dns_fuzz: the CNAME rdata at offset 0x2d starts a 58-octet label
// that an A record's owner name (pointer c02d) reads through, across the
// rest of the message and into the OPT's rdata. Removing the padding would
// change those bytes and leave the message malformed, so it must come back
// unchanged (and still valid).
TEST(EdnsResponse, StripPaddingKeepsAMessageWhoseNamesReadIntoTheOpt) {
  const Bytes raw{0x00, 0x02, 0x81, 0x80, 0x00, 0x01, 0x00, 0x02, 0x00, 0x01, 0x00, 0x02, 0x03, 0x77, 0x77, 0x77, 0x07, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x03, 0x63, 0x6f, 0x6d, 0x00, 0x00, 0x01, 0x00, 0x01, 0xc0, 0x0c, 0x00, 0x05, 0x00, 0x01, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x06, 0x3a, 0x63, 0x64, 0x6e, 0xc0, 0x10, 0xc0, 0x2d, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x04, 0x7f, 0x00, 0x00, 0x01, 0xc0, 0x10, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x06, 0x03, 0x6e, 0x73, 0x31, 0xc0, 0x10, 0x03, 0x6e, 0x73, 0x31, 0xc0, 0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x04, 0x7f, 0x00, 0x00, 0x02, 0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x0b, 0x00, 0x02, 0x01, 0x2c, 0x00, 0x0c, 0x00, 0x1e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  const Bytes s = strip_padding(raw);
  CHECK_TRUE(s == raw);
  CHECK_EQUAL(300, edns_tcp_keepalive(s).value_or(0));
}
