#include "net/endpoint.hpp"

#include <arpa/inet.h>

#include <cstring>
#include <string>

#include <CppUTest/TestHarness.h>

using nxdns::net::Endpoint;
using nxdns::net::is_ip_literal;
using nxdns::net::is_loopback;
using nxdns::net::is_unspecified;
using nxdns::net::make_endpoint;
using nxdns::net::parse_endpoint;

namespace {

Endpoint must_parse(const std::string& text, std::optional<std::uint16_t> def = std::nullopt) {
  std::string why;
  auto e = parse_endpoint(text, def, &why);
  if (!e) FAIL(("expected \"" + text + "\" to parse, got: " + why).c_str());
  return *e;
}

std::string reject_reason(const std::string& text, std::optional<std::uint16_t> def = std::nullopt) {
  std::string why;
  auto e = parse_endpoint(text, def, &why);
  if (e) FAIL(("expected \"" + text + "\" to be rejected, got " + e->to_string()).c_str());
  CHECK_FALSE(why.empty());
  return why;
}

bool contains(const std::string& hay, const char* needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST_GROUP(Endpoint){};

TEST(Endpoint, ParsesIpv4WithPortIntoSockaddrIn) {
  const Endpoint e = must_parse("192.0.2.1:5353");
  LONGS_EQUAL(AF_INET, e.family());
  LONGS_EQUAL(sizeof(sockaddr_in), e.len);
  const auto* sin = reinterpret_cast<const sockaddr_in*>(&e.addr);
  LONGS_EQUAL(5353, ntohs(sin->sin_port));
  in_addr expected{};
  inet_pton(AF_INET, "192.0.2.1", &expected);
  LONGS_EQUAL(expected.s_addr, sin->sin_addr.s_addr);
  LONGS_EQUAL(5353, e.port());
  STRCMP_EQUAL("192.0.2.1", e.host_string().c_str());
  STRCMP_EQUAL("192.0.2.1:5353", e.to_string().c_str());
}

TEST(Endpoint, ParsesBracketedIpv6WithPortAndPrintsCanonically) {
  const Endpoint e = must_parse("[2001:DB8:0::1]:853");
  LONGS_EQUAL(AF_INET6, e.family());
  LONGS_EQUAL(sizeof(sockaddr_in6), e.len);
  LONGS_EQUAL(853, e.port());
  STRCMP_EQUAL("2001:db8::1", e.host_string().c_str());
  STRCMP_EQUAL("[2001:db8::1]:853", e.to_string().c_str());
}

TEST(Endpoint, DefaultPortAppliesOnlyWhenPortOmitted) {
  LONGS_EQUAL(53, must_parse("127.0.0.1", 53).port());
  LONGS_EQUAL(53, must_parse("[::1]", 53).port());
  LONGS_EQUAL(5300, must_parse("127.0.0.1:5300", 53).port());
  LONGS_EQUAL(5300, must_parse("[::1]:5300", 53).port());
}

TEST(Endpoint, MissingPortWithoutDefaultIsRejected) {
  CHECK(contains(reject_reason("127.0.0.1"), "port"));
  CHECK(contains(reject_reason("[::1]"), "port"));
}

TEST(Endpoint, PortBoundsAndSyntax) {
  LONGS_EQUAL(1, must_parse("127.0.0.1:1").port());
  LONGS_EQUAL(65535, must_parse("127.0.0.1:65535").port());
  for (const char* bad : {"127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:99999999999", "127.0.0.1:-1",
                          "127.0.0.1:+53", "127.0.0.1:0x35", "127.0.0.1:53 ", "127.0.0.1:5 3", "[::1]:0"}) {
    CHECK_TEXT(contains(reject_reason(bad, 53), "port"), bad);
  }
  CHECK(contains(reject_reason("127.0.0.1:", 53), "empty port"));
  CHECK(contains(reject_reason("[::1]:", 53), "empty port"));
}

TEST(Endpoint, BareIpv6IsRejectedEvenWithDefaultPort) {
  // "2001:db8::1:53" is ambiguous (address, or address + port): never guess.
  CHECK(contains(reject_reason("::1", 53), "brackets"));
  CHECK(contains(reject_reason("2001:db8::1:53", 53), "brackets"));
  CHECK(contains(reject_reason("2001:db8::1:53"), "brackets"));
}

TEST(Endpoint, HostNamesAreRejected) {
  CHECK(contains(reject_reason("localhost:53"), "host names"));
  CHECK(contains(reject_reason("dns.example", 53), "host names"));
}

TEST(Endpoint, MalformedAddressesAreRejected) {
  CHECK(contains(reject_reason("", 53), "empty"));
  CHECK(contains(reject_reason(":53"), "missing IP"));
  CHECK(contains(reject_reason("[]:53"), "missing IP"));
  CHECK(contains(reject_reason("256.0.0.1:53"), "IPv4"));
  CHECK(contains(reject_reason("1.2.3:53"), "IPv4"));
  CHECK(contains(reject_reason("01.2.3.4:53"), "IPv4"));  // inet_pton: no leading zeros
  CHECK(contains(reject_reason("[::1:53"), "]"));
  CHECK(contains(reject_reason("[::1]53"), "':port'"));
  CHECK(contains(reject_reason("[::g]:53"), "IPv6"));
  CHECK(contains(reject_reason("[127.0.0.1]:53"), "only for IPv6"));
  CHECK(contains(reject_reason("[fe80::1%eth0]:53"), "IPv6"));
  CHECK(contains(reject_reason(" 127.0.0.1:53"), "IP"));
}

TEST(Endpoint, EmbeddedNulIsNotTruncatedAway) {
  const std::string with_nul("127.0.0.1\0junk", 14);
  std::string why;
  CHECK_FALSE(parse_endpoint(std::string_view(with_nul), 53, &why).has_value());
  CHECK_FALSE(make_endpoint(std::string_view(with_nul), 53).has_value());
  CHECK_FALSE(is_ip_literal(std::string_view(with_nul)));
}

TEST(Endpoint, WhyMayBeNull) { CHECK_FALSE(parse_endpoint("nope", 53, nullptr).has_value()); }

TEST(Endpoint, MakeEndpointTakesBareLiteralsOnly) {
  auto v4 = make_endpoint("10.1.2.3", 443);
  CHECK(v4.has_value());
  STRCMP_EQUAL("10.1.2.3:443", v4->to_string().c_str());
  auto v6 = make_endpoint("::1", 0);  // port 0 allowed: ephemeral bind
  CHECK(v6.has_value());
  STRCMP_EQUAL("[::1]:0", v6->to_string().c_str());
  CHECK_FALSE(make_endpoint("[::1]", 53).has_value());
  CHECK_FALSE(make_endpoint("10.1.2.3:53", 53).has_value());
  CHECK_FALSE(make_endpoint("dns.example", 53).has_value());
  CHECK_FALSE(make_endpoint("", 53).has_value());
}

TEST(Endpoint, IsIpLiteral) {
  CHECK(is_ip_literal("192.0.2.1"));
  CHECK(is_ip_literal("2001:db8::1"));
  CHECK(is_ip_literal("::ffff:192.0.2.1"));
  CHECK_FALSE(is_ip_literal("[2001:db8::1]"));
  CHECK_FALSE(is_ip_literal("192.0.2.1:53"));
  CHECK_FALSE(is_ip_literal("dns.example"));
  CHECK_FALSE(is_ip_literal("1.1"));  // inet_aton would take it; inet_pton must not
  CHECK_FALSE(is_ip_literal(""));
}

TEST(Endpoint, Loopback) {
  CHECK(is_loopback(must_parse("127.0.0.1:53")));
  CHECK(is_loopback(must_parse("127.255.0.9:53")));
  CHECK(is_loopback(must_parse("[::1]:53")));
  CHECK(is_loopback(must_parse("[::ffff:127.0.0.2]:53")));
  CHECK_FALSE(is_loopback(must_parse("128.0.0.1:53")));
  CHECK_FALSE(is_loopback(must_parse("0.0.0.0:53")));
  CHECK_FALSE(is_loopback(must_parse("[::]:53")));
  CHECK_FALSE(is_loopback(must_parse("[::2]:53")));
  CHECK_FALSE(is_loopback(must_parse("[::ffff:192.0.2.1]:53")));
  CHECK_FALSE(is_loopback(Endpoint{}));
}

TEST(Endpoint, Unspecified) {
  CHECK(is_unspecified(must_parse("0.0.0.0:53")));
  CHECK(is_unspecified(must_parse("[::]:53")));
  CHECK_FALSE(is_unspecified(must_parse("127.0.0.1:53")));
  CHECK_FALSE(is_unspecified(must_parse("[::1]:53")));
  CHECK_FALSE(is_unspecified(Endpoint{}));
}

TEST(Endpoint, EqualityComparesFamilyAddressAndPort) {
  CHECK(must_parse("127.0.0.1:53") == must_parse("127.0.0.1", 53));
  CHECK(must_parse("[2001:db8::1]:53") == must_parse("[2001:db8:0:0::1]:53"));
  CHECK(must_parse("127.0.0.1:53") != must_parse("127.0.0.1:54"));
  CHECK(must_parse("127.0.0.1:53") != must_parse("127.0.0.2:53"));
  CHECK(must_parse("[::ffff:127.0.0.1]:53") != must_parse("127.0.0.1:53"));
  CHECK(Endpoint{} == Endpoint{});
  CHECK(Endpoint{} != must_parse("127.0.0.1:53"));
}

TEST(Endpoint, EqualityIgnoresPaddingAndFlowinfo) {
  Endpoint a = must_parse("[::1]:53");
  Endpoint b = a;
  reinterpret_cast<sockaddr_in6*>(&b.addr)->sin6_flowinfo = htonl(7);
  CHECK(a == b);
  Endpoint c = must_parse("127.0.0.1:53");
  Endpoint d = c;
  std::memset(reinterpret_cast<sockaddr_in*>(&d.addr)->sin_zero, 0xAB, sizeof(sockaddr_in::sin_zero));
  CHECK(c == d);
}

TEST(Endpoint, UnsetEndpointPrintsAsUnset) {
  const Endpoint e;
  STRCMP_EQUAL("<unset>", e.to_string().c_str());
  STRCMP_EQUAL("", e.host_string().c_str());
  LONGS_EQUAL(0, e.port());
}

TEST(Endpoint, RoundTripsThroughToString) {
  for (const char* text : {"192.0.2.7:53", "[2001:db8::7]:853", "[::]:53", "0.0.0.0:65535"}) {
    const Endpoint e = must_parse(text);
    STRCMP_EQUAL(text, e.to_string().c_str());
    CHECK(must_parse(e.to_string()) == e);
  }
}
