// The built-in zone table: the special-use names of RFC 6303 §4, RFC 7793,
// RFC 6761 §6, RFC 7686 and RFC 8375, laid out at compile time so that the
// table exists before main and costs nothing to look at.
#include "route/special_zones.hpp"

#include <array>
#include <cstddef>
#include <string_view>

namespace nxdns::route {

namespace {

// "N.<suffix>" for one octet N, in static storage: the RFC 1918 172.16/12
// and RFC 6598 100.64/10 zones are one per octet of a range, too many to
// write out by hand without a slip going unnoticed.
struct OctetName {
  char text[32]{};
  std::size_t size = 0;
  constexpr std::string_view view() const { return {text, size}; }
};

template <int First, int Last>
constexpr std::array<OctetName, Last - First + 1> octet_names(std::string_view suffix) {
  std::array<OctetName, Last - First + 1> out{};
  for (int octet = First; octet <= Last; ++octet) {
    OctetName& n = out[static_cast<std::size_t>(octet - First)];
    char digits[3]{};
    int count = 0;
    for (int v = octet; count == 0 || v > 0; v /= 10) digits[count++] = static_cast<char>('0' + v % 10);
    while (count > 0) n.text[n.size++] = digits[--count];
    n.text[n.size++] = '.';
    for (char c : suffix) n.text[n.size++] = c;
  }
  return out;
}

constexpr std::string_view rfc6303 = "RFC 6303";

// RFC 6303 §4.1: 172.16.0.0/12, one zone per second octet.
constexpr auto private_172 = octet_names<16, 31>("172.in-addr.arpa");
// RFC 7793 (RFC 6598's shared address space 100.64.0.0/10 added to the
// RFC 6303 list): one zone per second octet, 64..127.
constexpr auto shared_100 = octet_names<64, 127>("100.in-addr.arpa");

// The zones written out whole, in the order of the RFCs' sections.
constexpr SpecialZone fixed_zones[] = {
    // RFC 6303 §4.1 (RFC 1918); 172.16/12 is private_172.
    {"10.in-addr.arpa", SpecialKind::empty_zone, rfc6303},
    {"168.192.in-addr.arpa", SpecialKind::empty_zone, rfc6303},
    // RFC 6303 §4.2 (RFC 5735: this network, loopback, link local, the
    // three documentation networks, limited broadcast).
    {"0.in-addr.arpa", SpecialKind::empty_zone, rfc6303},
    {"127.in-addr.arpa", SpecialKind::empty_zone, rfc6303},
    {"254.169.in-addr.arpa", SpecialKind::empty_zone, rfc6303},
    {"2.0.192.in-addr.arpa", SpecialKind::empty_zone, rfc6303},
    {"100.51.198.in-addr.arpa", SpecialKind::empty_zone, rfc6303},
    {"113.0.203.in-addr.arpa", SpecialKind::empty_zone, rfc6303},
    {"255.255.255.255.in-addr.arpa", SpecialKind::empty_zone, rfc6303},
    // RFC 6303 §4.3: the unspecified address ::/128 and loopback ::1/128.
    {"0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa", SpecialKind::empty_zone, rfc6303},
    {"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa", SpecialKind::empty_zone, rfc6303},
    // RFC 6303 §4.4: locally assigned unique local addresses, fd00::/8
    // (fc00::/8 has no assignment authority and is not listed).
    {"d.f.ip6.arpa", SpecialKind::empty_zone, rfc6303},
    // RFC 6303 §4.5: link local, fe80::/10.
    {"8.e.f.ip6.arpa", SpecialKind::empty_zone, rfc6303},
    {"9.e.f.ip6.arpa", SpecialKind::empty_zone, rfc6303},
    {"a.e.f.ip6.arpa", SpecialKind::empty_zone, rfc6303},
    {"b.e.f.ip6.arpa", SpecialKind::empty_zone, rfc6303},
    // RFC 6303 §4.6: the documentation prefix 2001:db8::/32.
    {"8.b.d.0.1.0.0.2.ip6.arpa", SpecialKind::empty_zone, rfc6303},
    // RFC 6761 §6.3: every name under localhost is this host.
    {"localhost", SpecialKind::loopback, "RFC 6761"},
    // RFC 6761 §6.4, §6.2: never delegated, so no resolver can answer
    // anything but NXDOMAIN.
    {"invalid", SpecialKind::empty_zone, "RFC 6761"},
    {"test", SpecialKind::empty_zone, "RFC 6761"},
    // RFC 7686 §2: resolvers must answer NXDOMAIN for .onion, which only
    // Tor resolves; sent on, the name tells the upstream what was visited.
    {"onion", SpecialKind::empty_zone, "RFC 7686"},
    // RFC 8375: the household's own domain.
    {"home.arpa", SpecialKind::empty_zone, "RFC 8375"},
};

constexpr std::size_t zone_count = std::size(fixed_zones) + private_172.size() + shared_100.size();

constexpr std::array<SpecialZone, zone_count> table = [] {
  std::array<SpecialZone, zone_count> t{};
  std::size_t i = 0;
  for (const SpecialZone& z : fixed_zones) t[i++] = z;
  for (const OctetName& n : private_172) t[i++] = {n.view(), SpecialKind::empty_zone, rfc6303};
  for (const OctetName& n : shared_100) t[i++] = {n.view(), SpecialKind::empty_zone, "RFC 7793"};
  return t;
}();

}  // namespace

std::span<const SpecialZone> special_zones() { return table; }

}  // namespace nxdns::route
