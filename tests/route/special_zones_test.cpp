// The built-in zone table against the RFCs' lists, each zone derived here
// from the address block it stands for, not copied from the table.
#include "route/special_zones.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "dns/message.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::route::SpecialKind;
using nxdns::route::special_zones;
using nxdns::route::SpecialZone;

namespace {

// The ip6.arpa name of an IPv6 prefix of `nibbles` nibbles (RFC 3596 §2.5).
std::string ip6_zone(const char* address, int nibbles) {
  std::uint8_t a[16]{};
  CHECK_EQUAL(1, inet_pton(AF_INET6, address, a));
  std::string out;
  constexpr char hex[] = "0123456789abcdef";
  for (int i = nibbles - 1; i >= 0; --i) {
    const std::uint8_t octet = a[i / 2];
    out += hex[i % 2 == 0 ? octet >> 4 : octet & 0xF];
    out += '.';
  }
  return out + "ip6.arpa";
}

struct Expected {
  std::string name;
  SpecialKind kind;
  std::string rfc;
};

std::vector<Expected> rfc_lists() {
  std::vector<Expected> e;
  auto empty = [&](std::string name, std::string rfc) { e.push_back({std::move(name), SpecialKind::empty_zone, rfc}); };
  // RFC 6303 §4.1: RFC 1918.
  empty("10.in-addr.arpa", "RFC 6303");
  for (int octet = 16; octet <= 31; ++octet) empty(std::to_string(octet) + ".172.in-addr.arpa", "RFC 6303");
  empty("168.192.in-addr.arpa", "RFC 6303");
  // RFC 6303 §4.2.
  for (const char* z : {"0.in-addr.arpa", "127.in-addr.arpa", "254.169.in-addr.arpa", "2.0.192.in-addr.arpa",
                        "100.51.198.in-addr.arpa", "113.0.203.in-addr.arpa", "255.255.255.255.in-addr.arpa"})
    empty(z, "RFC 6303");
  // RFC 6303 §4.3-§4.6.
  empty(ip6_zone("::", 32), "RFC 6303");
  empty(ip6_zone("::1", 32), "RFC 6303");
  empty(ip6_zone("fd00::", 2), "RFC 6303");
  for (const char* ll : {"fe80::", "fe90::", "fea0::", "feb0::"}) empty(ip6_zone(ll, 3), "RFC 6303");
  empty(ip6_zone("2001:db8::", 8), "RFC 6303");
  // RFC 7793: 100.64.0.0/10.
  for (int octet = 64; octet <= 127; ++octet) empty(std::to_string(octet) + ".100.in-addr.arpa", "RFC 7793");
  e.push_back({"localhost", SpecialKind::loopback, "RFC 6761"});
  empty("invalid", "RFC 6761");
  empty("test", "RFC 6761");
  empty("onion", "RFC 7686");
  empty("home.arpa", "RFC 8375");
  return e;
}

const SpecialZone* in_table(const std::string& name) {
  for (const SpecialZone& z : special_zones())
    if (z.name == name) return &z;
  return nullptr;
}

// Whether `inner` is `outer` or lies below it.
bool at_or_below(std::string_view inner, std::string_view outer) {
  return inner == outer ||
         (inner.size() > outer.size() && inner.ends_with(outer) && inner[inner.size() - outer.size() - 1] == '.');
}

}  // namespace

TEST_GROUP(SpecialZones){};

TEST(SpecialZones, HoldsExactlyTheRfcLists) {
  const std::vector<Expected> expected = rfc_lists();
  for (const Expected& e : expected) {
    const SpecialZone* z = in_table(e.name);
    if (!z) FAIL(("missing: " + e.name).c_str());
    CHECK_EQUAL(static_cast<int>(e.kind), static_cast<int>(z->kind));
    STRCMP_EQUAL(e.rfc.c_str(), std::string(z->rfc).c_str());
  }
  // Nothing else: `example` (RFC 6761 §6.5) in particular resolves normally.
  LONGS_EQUAL(expected.size(), special_zones().size());
  CHECK(in_table("example") == nullptr);
}

TEST(SpecialZones, EveryNameParsesLowerCaseWithoutTrailingDotAndOnce) {
  std::set<nxdns::dns::Bytes> seen;
  for (const SpecialZone& z : special_zones()) {
    const std::string name(z.name);
    const auto wire = nxdns::dns::name_from_text(name);
    if (!wire) FAIL(("does not parse: " + name).c_str());
    CHECK_FALSE(name.empty() || name.back() == '.');
    CHECK_FALSE(std::any_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; }));
    if (!seen.insert(*wire).second) FAIL(("twice: " + name).c_str());
    CHECK_FALSE(z.rfc.empty());
  }
}

TEST(SpecialZones, NoZoneLiesInsideAnother) {
  // A name then belongs to at most one built-in zone: no longest-match rule
  // is needed, and no zone's answers can shadow another's.
  for (const SpecialZone& a : special_zones())
    for (const SpecialZone& b : special_zones())
      if (&a != &b && at_or_below(a.name, b.name))
        FAIL((std::string(a.name) + " inside " + std::string(b.name)).c_str());
}

TEST(SpecialZones, OnlyLocalhostIsLoopback) {
  for (const SpecialZone& z : special_zones())
    CHECK_EQUAL(z.name == "localhost", z.kind == SpecialKind::loopback);
}
