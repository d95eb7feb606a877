// parse_record: the zone-file subset of static records, as tables. The
// expected RDATA is written out octet by octet (names with the tests' own
// wire builder), so a codec slip cannot hide behind a matching one here.
#include <string>
#include <vector>

#include "dns/packets.hpp"
#include "route/local_records.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::dns::Bytes;
using nxdns::dns::test::wname;
using namespace nxdns::route;

namespace {

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
Bytes str(std::string_view s) { return Bytes(s.begin(), s.end()); }
// One <character-string>.
Bytes cs(std::string_view s) { return cat({Bytes{static_cast<std::uint8_t>(s.size())}, str(s)}); }

struct Good {
  std::string line;
  Bytes owner;
  std::uint16_t type;
  std::uint32_t ttl;
  Bytes rdata;
};

struct Bad {
  std::string line;
  const char* why;  // expected within the reason
};

void check_good(const Good& g) {
  std::string why;
  const auto r = parse_record(g.line, "records[7]", &why);
  if (!r) FAIL(("rejected: " + g.line + ": " + why).c_str());
  const std::string ctx = "line: " + g.line;
  CHECK_TEXT(r->owner == g.owner, ctx.c_str());
  LONGS_EQUAL_TEXT(g.type, r->type, ctx.c_str());
  UNSIGNED_LONGS_EQUAL_TEXT(g.ttl, r->ttl, ctx.c_str());
  UNSIGNED_LONGS_EQUAL_TEXT(g.rdata.size(), r->rdata.size(), ctx.c_str());
  CHECK_TEXT(r->rdata == g.rdata, ctx.c_str());
  STRCMP_EQUAL("records[7]", r->source.c_str());
}

void check_bad(const Bad& b) {
  std::string why;
  const auto r = parse_record(b.line, "records[0]", &why);
  if (r) FAIL(("accepted: " + b.line).c_str());
  if (why.find(b.why) == std::string::npos) FAIL(("line: " + b.line + "\n want: " + b.why + "\n got:  " + why).c_str());
  // One line, no control octets, whatever the input held.
  for (char c : why) CHECK_TEXT(static_cast<unsigned char>(c) >= 0x20, why.c_str());
}

const Bytes nas = wname("nas.home.arpa");

}  // namespace

TEST_GROUP(ParseRecord){};

TEST(ParseRecord, AddressRecords) {
  const Good rows[] = {
      {"nas.home.arpa A 192.168.1.10", nas, type_a, 300, {192, 168, 1, 10}},
      {"nas.home.arpa. A 192.168.1.10", nas, type_a, 300, {192, 168, 1, 10}},
      {"nas.home.arpa 3600 IN A 192.168.1.10", nas, type_a, 3600, {192, 168, 1, 10}},
      {"nas.home.arpa IN 3600 A 192.168.1.10", nas, type_a, 3600, {192, 168, 1, 10}},
      {"nas.home.arpa in a 192.168.1.10", nas, type_a, 300, {192, 168, 1, 10}},
      {"NAS.Home.ARPA A 192.168.1.10", nas, type_a, 300, {192, 168, 1, 10}},
      {"\tnas.home.arpa\t0\tA\t10.0.0.1  ; the NAS", nas, type_a, 0, {10, 0, 0, 1}},
      {"nas.home.arpa 2147483647 A 10.0.0.1", nas, type_a, 2147483647, {10, 0, 0, 1}},
      {"nas.home.arpa AAAA fd00::10", nas, type_aaaa, 300,
       {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10}},
      {"nas.home.arpa AAAA ::ffff:192.168.1.10", nas, type_aaaa, 300,
       {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 10}},
      // An escaped dot is part of a label (RFC 1035 §5.1).
      {"a\\.b.home.arpa A 10.0.0.1", cat({Bytes{3, 'a', '.', 'b'}, wname("home.arpa")}), type_a, 300, {10, 0, 0, 1}},
      {"nas A 10.0.0.1", wname("nas"), type_a, 300, {10, 0, 0, 1}},
  };
  for (const Good& g : rows) check_good(g);
}

TEST(ParseRecord, NameRecords) {
  const Good rows[] = {
      {"www.home.arpa CNAME NAS.home.arpa.", wname("www.home.arpa"), type_cname, 300, nas},
      {"10.1.168.192.in-addr.arpa PTR nas.home.arpa", wname("10.1.168.192.in-addr.arpa"), type_ptr, 300, nas},
      {"home.arpa 60 MX 10 mail.home.arpa", wname("home.arpa"), type_mx, 60, cat({{0, 10}, wname("mail.home.arpa")})},
      // RFC 7505: a null MX, "." as the exchange.
      {"home.arpa MX 0 .", wname("home.arpa"), type_mx, 300, {0, 0, 0}},
      {"_sip._tcp.home.arpa SRV 10 60 5060 pbx.home.arpa", wname("_sip._tcp.home.arpa"), type_srv, 300,
       cat({{0, 10, 0, 60, 0x13, 0xC4}, wname("pbx.home.arpa")})},
      {"_ipp._tcp.home.arpa SRV 0 0 65535 .", wname("_ipp._tcp.home.arpa"), type_srv, 300,
       {0, 0, 0, 0, 0xFF, 0xFF, 0}},
  };
  for (const Good& g : rows) check_good(g);
}

TEST(ParseRecord, TxtStringsQuotingAndEscapes) {
  const Bytes t = wname("t.home.arpa");
  const Good rows[] = {
      {"t.home.arpa TXT \"v=spf1 -all\"", t, type_txt, 300, cs("v=spf1 -all")},
      {"t.home.arpa TXT bare", t, type_txt, 300, cs("bare")},
      {"t.home.arpa TXT \"a b\" c \"\"", t, type_txt, 300, cat({cs("a b"), cs("c"), cs("")})},
      {"t.home.arpa TXT \"say \\\"hi\\\"\"", t, type_txt, 300, cs("say \"hi\"")},
      {"t.home.arpa TXT \"\\065\\066\\000\\255\"", t, type_txt, 300, cs(std::string_view("AB\0\xff", 4))},
      {"t.home.arpa TXT back\\\\slash", t, type_txt, 300, cs("back\\slash")},
      {"t.home.arpa TXT esc\\ aped", t, type_txt, 300, cs("esc aped")},
      // ';' inside quotes is text; outside, a comment.
      {"t.home.arpa TXT \"a;b\" ; comment \"x\"", t, type_txt, 300, cs("a;b")},
      {"t.home.arpa TXT \"Wohnzimmer-Drucker \xc3\xbc\"", t, type_txt, 300, cs("Wohnzimmer-Drucker \xc3\xbc")},
      {"t.home.arpa TXT \"" + std::string(255, 'x') + "\"", t, type_txt, 300, cs(std::string(255, 'x'))},
  };
  for (const Good& g : rows) check_good(g);
}

TEST(ParseRecord, Errors) {
  const std::string label64(64, 'a');
  std::string long_name;
  for (int i = 0; i < 5; ++i) long_name += std::string(60, 'b') + ".";
  std::string huge_txt = "t TXT";
  for (int i = 0; i < 258; ++i) huge_txt += " " + std::string(255, 'x');
  const Bad rows[] = {
      {"", "empty record"},
      {"   ; only a comment", "empty record"},
      // Owner.
      {label64 + ".home.arpa A 10.0.0.1", "owner: 'aaaa"},
      {label64 + ".home.arpa A 10.0.0.1", "(label longer than 63 octets)"},
      {long_name + " A 10.0.0.1", "(name longer than 255 octets)"},
      {"a..b A 10.0.0.1", "owner: 'a..b' is not a valid DNS name (empty label)"},
      {"@ A 10.0.0.1", "owner: '@' needs an origin"},
      {"*.home.arpa A 10.0.0.1", "owner: wildcards are not supported"},
      {". A 10.0.0.1", "owner: the root"},
      {"\"nas\" A 10.0.0.1", "owner: a quoted string is not a name"},
      // TTL.
      {"nas 2147483648 A 10.0.0.1", "TTL: '2147483648' is not a number from 0 to 2147483647"},
      {"nas 99999999999 A 10.0.0.1", "TTL: '99999999999'"},
      {"nas 1h A 10.0.0.1", "TTL: '1h'"},
      {"nas -5 A 10.0.0.1", "TTL: '-5'"},
      {"nas 60 IN 60 A 10.0.0.1", "TTL: given twice"},
      // Class.
      {"nas CH TXT hi", "class 'CH' is not supported"},
      {"nas 60 hs A 10.0.0.1", "class 'hs' is not supported"},
      {"nas CLASS3 A 10.0.0.1", "class 'CLASS3' is not supported"},
      {"nas IN IN A 10.0.0.1", "class: given twice"},
      // Type.
      {"nas", "type: missing"},
      {"nas 60 IN", "type: missing"},
      {"nas NS ns.home.arpa", "type 'NS' is not one of A, AAAA, CNAME, PTR, TXT, SRV, MX"},
      {"nas FOO 1", "type 'FOO'"},
      {"nas \"A\" 10.0.0.1", "type: a quoted string is not a type"},
      // RDATA.
      {"nas A", "A: expected ADDRESS after the type, got 0 fields"},
      {"nas A 10.0.0.1 10.0.0.2", "A: expected ADDRESS after the type, got 2 fields"},
      {"nas A 10.0.0", "A address: '10.0.0' is not an IPv4 address"},
      {"nas A 256.1.1.1", "A address: '256.1.1.1'"},
      {"nas A 010.0.0.1", "A address: '010.0.0.1'"},
      {"nas A ::1", "A address: '::1' is not an IPv4 address"},
      {"nas AAAA 10.0.0.1", "AAAA address: '10.0.0.1' is not an IPv6 address"},
      {"nas AAAA fe80::1%eth0", "AAAA address: 'fe80::1%eth0'"},
      {"nas CNAME", "CNAME: expected TARGET after the type, got 0 fields"},
      {"nas CNAME a..b", "CNAME target: 'a..b' is not a valid DNS name (empty label)"},
      {"nas PTR \"x\"", "PTR target: a quoted string is not a name"},
      {"nas MX mail", "MX: expected PREFERENCE EXCHANGE after the type, got 1 field"},
      {"nas MX 65536 mail", "MX preference: '65536' is not a number from 0 to 65535"},
      {"nas MX ten mail", "MX preference: 'ten'"},
      {"nas SRV 1 2 3", "SRV: expected PRIORITY WEIGHT PORT TARGET after the type, got 3 fields"},
      {"nas SRV x 2 3 t", "SRV priority: 'x'"},
      {"nas SRV 1 x 3 t", "SRV weight: 'x'"},
      {"nas SRV 1 2 70000 t", "SRV port: '70000'"},
      {"nas SRV 1 2 3 " + label64, "SRV target: 'aaaa"},
      {"nas TXT", "TXT: expected STRING... after the type, got 0 fields"},
      {"nas TXT \"" + std::string(256, 'x') + "\"", "TXT: a string of 256 octets; each may hold at most 255"},
      {"nas TXT \"\\300\"", "TXT: \\300 is over 255"},
      {"nas TXT \"\\256\"", "TXT: \\256 is over 255"},
      {"nas TXT \"\\12\"", "TXT: \\DDD needs three digits"},
      {huge_txt, "a record holds at most 65535"},
      // Syntax.
      {"nas TXT \"unterminated", "unterminated quoted string"},
      {"nas TXT \"a\"b", "text right after a closing quote"},
      {"nas TXT a\"b\"", "a quote inside a field"},
      {"nas TXT a\\", "a backslash ends the record"},
      {"nas A ( 10.0.0.1 )", "parentheses"},
      {"nas A 10.0.0.1\x01", "a control character"},
      {"nas TXT \"a\x1b[31m\"", "a control character in a quoted string"},
      {"n\\009s A 10.0.0.1 x", "got 2 fields"},
  };
  for (const Bad& b : rows) check_bad(b);
}

TEST(ParseRecord, ReasonsReadWhole) {
  std::string why;
  CHECK_FALSE(parse_record("nas A 1\\.2", "r", &why).has_value());
  STRCMP_EQUAL("A address: '1\\.2' is not an IPv4 address", why.c_str());
  CHECK_FALSE(parse_record("nas TTL A 1.2.3.4", "r", &why).has_value());
  STRCMP_EQUAL("type 'TTL' is not one of A, AAAA, CNAME, PTR, TXT, SRV, MX", why.c_str());
}

TEST(ParseRecord, WhyMayBeNull) {
  CHECK_FALSE(parse_record("nas A x", "r", nullptr).has_value());
  CHECK_TRUE(parse_record("nas A 10.0.0.1", "r", nullptr).has_value());
}
