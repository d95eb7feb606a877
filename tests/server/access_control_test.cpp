// AccessControl: CIDR parsing and the longest-prefix decision, as tables.
// Addresses are documentation and private ranges; nothing here connects.
#include "server/access_control.hpp"

#include <arpa/inet.h>

#include <string>

#include <CppUTest/TestHarness.h>

using nxdns::server::Access;
using nxdns::server::AccessControl;
using nxdns::server::AccessRule;
using nxdns::server::Cidr;
using nxdns::server::parse_cidr;

namespace {

Cidr cidr(const char* text) {
  std::string why;
  auto c = parse_cidr(text, &why);
  if (!c) FAIL((std::string("parse_cidr(") + text + "): " + why).c_str());
  return *c;
}

Access decide(const AccessControl& acl, const char* ip) {
  std::uint8_t addr[16] = {};
  const bool v6 = std::string(ip).find(':') != std::string::npos;
  CHECK_EQUAL(1, ::inet_pton(v6 ? AF_INET6 : AF_INET, ip, addr));
  return acl.decide(v6 ? AF_INET6 : AF_INET, addr);
}

const char* name(Access a) { return a == Access::allow ? "allow" : "refuse"; }

}  // namespace

TEST_GROUP(Cidr){};

TEST(Cidr, ParsesAndPrintsPrefixes) {
  struct Row {
    const char* in;
    const char* out;
  } rows[] = {
      {"192.168.0.0/16", "192.168.0.0/16"}, {"10.1.2.3", "10.1.2.3/32"}, {"0.0.0.0/0", "0.0.0.0/0"},
      {"fd00::/8", "fd00::/8"},             {"::1", "::1/128"},          {"2001:db8::/32", "2001:db8::/32"},
      {"100.64.0.0/10", "100.64.0.0/10"},   {"::/0", "::/0"},
  };
  for (const Row& r : rows) STRCMP_EQUAL(r.out, cidr(r.in).to_string().c_str());
}

TEST(Cidr, RejectsWhatIsNotAPrefix) {
  struct Row {
    const char* in;
    const char* why;
  } rows[] = {
      {"192.168.1.1/16", "address has bits set past the /16 prefix (did you mean 192.168.0.0/16?)"},
      {"fd00::1/8", "address has bits set past the /8 prefix (did you mean fd00::/8?)"},
      {"192.168.0.0/33", "the prefix length after '/' must be 0..32"},
      {"fd00::/129", "the prefix length after '/' must be 0..128"},
      {"10.0.0.0/", "the prefix length after '/' must be 0..32"},
      {"10.0.0.0/-1", "the prefix length after '/' must be 0..32"},
      {"10.0.0.0/8/8", "the prefix length after '/' must be 0..32"},
      {"10.0.0/8", "not an IPv4 address or prefix"},
      {"lan", "not an IPv4 address or prefix"},
      {"[fd00::]/8", "not an IPv6 address or prefix"},
      {"", "not an IPv4 address or prefix"},
  };
  for (const Row& r : rows) {
    std::string why;
    CHECK_FALSE_TEXT(parse_cidr(r.in, &why).has_value(), r.in);
    STRCMP_EQUAL(r.why, why.c_str());
  }
}

TEST_GROUP(AccessControl){};

TEST(AccessControl, DefaultsServeTheHomeRangesAndRefuseTheRest) {
  const AccessControl acl;
  struct Row {
    const char* ip;
    Access want;
  } rows[] = {
      {"127.0.0.1", Access::allow},      {"127.255.1.2", Access::allow},     {"10.0.0.1", Access::allow},
      {"172.16.0.1", Access::allow},     {"172.31.255.255", Access::allow},  {"172.32.0.1", Access::refuse},
      {"192.168.1.20", Access::allow},   {"192.169.0.1", Access::refuse},    {"100.64.0.1", Access::allow},
      {"100.127.255.255", Access::allow}, {"100.128.0.1", Access::refuse},   {"169.254.3.4", Access::allow},
      {"8.8.8.8", Access::refuse},       {"192.0.2.1", Access::refuse},      {"0.0.0.0", Access::refuse},
      {"::1", Access::allow},            {"fe80::1", Access::allow},         {"febf::1", Access::allow},
      {"fec0::1", Access::refuse},       {"fd12:3456::1", Access::allow},    {"fc00::1", Access::allow},
      {"2001:db8::1", Access::refuse},   {"::", Access::refuse},             {"::ffff:192.168.1.1", Access::allow},
      {"::ffff:192.0.2.1", Access::refuse},
  };
  for (const Row& r : rows) STRCMP_EQUAL_TEXT(name(r.want), name(decide(acl, r.ip)), r.ip);
}

TEST(AccessControl, LongestPrefixWinsWhateverTheOrder) {
  // The operator refuses one loopback address and one host of an allowed
  // /24 inside a refused /16 inside the allowed 10/8.
  const AccessControl acl({
      {cidr("10.1.2.0/24"), Access::allow},
      {cidr("127.0.0.9"), Access::refuse},
      {cidr("10.1.2.3"), Access::refuse},
      {cidr("10.1.0.0/16"), Access::refuse},
  });
  struct Row {
    const char* ip;
    Access want;
  } rows[] = {
      {"127.0.0.9", Access::refuse}, {"127.0.0.8", Access::allow}, {"10.1.2.3", Access::refuse},
      {"10.1.2.4", Access::allow},   {"10.1.3.1", Access::refuse}, {"10.2.0.1", Access::allow},
      {"8.8.8.8", Access::refuse},
  };
  for (const Row& r : rows) STRCMP_EQUAL_TEXT(name(r.want), name(decide(acl, r.ip)), r.ip);
}

TEST(AccessControl, SamePrefixAsADefaultReplacesIt) {
  // Opening IPv4 to everyone (a deliberate choice behind a firewall) leaves
  // IPv6 at its default, and closing 10/8 leaves 192.168/16 open.
  const AccessControl acl({{cidr("0.0.0.0/0"), Access::allow}, {cidr("10.0.0.0/8"), Access::refuse}});
  STRCMP_EQUAL("allow", name(decide(acl, "192.0.2.1")));
  STRCMP_EQUAL("refuse", name(decide(acl, "10.9.9.9")));
  STRCMP_EQUAL("allow", name(decide(acl, "192.168.0.1")));
  STRCMP_EQUAL("refuse", name(decide(acl, "2001:db8::1")));
  // One rule per prefix after the merge: the defaults' 0/0 is gone.
  int zero_v4 = 0;
  for (const AccessRule& r : acl.rules()) zero_v4 += r.net == cidr("0.0.0.0/0");
  CHECK_EQUAL(1, zero_v4);
}

TEST(AccessControl, OddPrefixLengthsMatchBitExactly) {
  const AccessControl acl({{cidr("192.0.2.128/25"), Access::allow}, {cidr("2001:db8:8000::/33"), Access::allow}});
  STRCMP_EQUAL("allow", name(decide(acl, "192.0.2.128")));
  STRCMP_EQUAL("allow", name(decide(acl, "192.0.2.255")));
  STRCMP_EQUAL("refuse", name(decide(acl, "192.0.2.127")));
  STRCMP_EQUAL("allow", name(decide(acl, "2001:db8:8000::1")));
  STRCMP_EQUAL("refuse", name(decide(acl, "2001:db8:7fff::1")));
}
