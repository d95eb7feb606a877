// Which gateway is a home router and which reverse zones are the LAN's, as
// a table: every row names the rule it stands for.
#include "route/home_network.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::route::Gateway;
using nxdns::route::home_network_from;
using nxdns::route::InterfaceAddress;

namespace {

// "192.168.1.10/24" or "fd12::1/64" on `ifname`.
InterfaceAddress ifaddr(const std::string& cidr, const char* ifname = "eth0") {
  InterfaceAddress ia;
  ia.interface = ifname;
  const auto slash = cidr.find('/');
  const std::string host = cidr.substr(0, slash);
  ia.prefix = static_cast<std::uint8_t>(std::stoi(cidr.substr(slash + 1)));
  ia.family = host.find(':') == std::string::npos ? AF_INET : AF_INET6;
  CHECK_EQUAL(1, inet_pton(ia.family, host.c_str(), ia.addr));
  return ia;
}

Gateway gateway(const char* quad, const char* ifname) {
  Gateway g;
  CHECK_EQUAL(1, inet_pton(AF_INET, quad, g.addr));
  g.interface = ifname;
  return g;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return "[" + out + "]";
}

// The zones x.<suffix> for x in [from, to], sorted as the result is.
std::vector<std::string> span_of(unsigned from, unsigned to, const std::string& suffix) {
  std::vector<std::string> v;
  for (unsigned x = from; x <= to; ++x) v.push_back(std::to_string(x) + "." + suffix);
  std::sort(v.begin(), v.end());
  return v;
}

struct ZoneRow {
  const char* situation;
  std::vector<std::string> addrs;
  std::vector<std::string> zones;
};

}  // namespace

TEST_GROUP(HomeNetworkFrom){};

TEST(HomeNetworkFrom, ReverseZones) {
  const ZoneRow rows[] = {
      {"a /24 is its own zone", {"192.168.1.10/24"}, {"1.168.192.in-addr.arpa"}},
      {"a /8", {"10.1.2.3/8"}, {"10.in-addr.arpa"}},
      {"a /20 rounds out to its /16", {"172.20.3.4/20"}, {"20.172.in-addr.arpa"}},
      {"a /25 rounds out to its /24", {"192.168.1.129/25"}, {"1.168.192.in-addr.arpa"}},
      {"a /23 rounds out to its /16", {"10.1.2.3/23"}, {"1.10.in-addr.arpa"}},
      {"a /32 is one address's zone", {"10.1.2.3/32"}, {"3.2.1.10.in-addr.arpa"}},
      {"shared address space (RFC 6598) /24", {"100.100.1.1/24"}, {"1.100.100.in-addr.arpa"}},
      // 100.in-addr.arpa would take in public space: the /16s of the block.
      {"all of 100.64.0.0/10", {"100.64.0.5/10"}, span_of(64, 127, "100.in-addr.arpa")},
      // 172.in-addr.arpa would too: the /16s of 172.16.0.0/12.
      {"all of 172.16.0.0/12", {"172.20.5.5/12"}, span_of(16, 31, "172.in-addr.arpa")},
      {"a prefix shorter than its block is the block", {"10.1.2.3/6"}, {"10.in-addr.arpa"}},
      {"172.16/12 reached by a /8 mask is still only the block", {"172.20.5.5/8"},
       span_of(16, 31, "172.in-addr.arpa")},
      {"public addresses give none", {"8.8.8.8/24", "203.0.113.7/24", "2001:db8::1/64"}, {}},
      {"just outside the private blocks",
       {"172.15.255.1/16", "172.32.0.1/16", "100.63.0.1/16", "100.128.0.1/16", "192.169.0.1/16", "11.0.0.1/8"},
       {}},
      {"loopback and link-local give none", {"127.0.0.1/8", "169.254.3.4/16", "::1/128", "fe80::1/64"}, {}},
      {"a ULA /64 is its 16-nibble zone", {"fd12:3456:789a:1::2/64"},
       {"1.0.0.0.a.9.8.7.6.5.4.3.2.1.d.f.ip6.arpa"}},
      {"a ULA /48", {"fd12:3456:789a::1/48"}, {"a.9.8.7.6.5.4.3.2.1.d.f.ip6.arpa"}},
      {"a ULA /62 rounds out to its /60", {"fd12:3456:789a:1::2/62"},
       {"0.0.0.a.9.8.7.6.5.4.3.2.1.d.f.ip6.arpa"}},
      {"fc00::/8 is ULA space too", {"fc00:1:2:3::9/64"}, {"3.0.0.0.2.0.0.0.1.0.0.0.0.0.c.f.ip6.arpa"}},
      // f.ip6.arpa would take in fe80::/10 and ff00::/8: the two /8s.
      {"all of fc00::/7", {"fd00::1/7"}, {"c.f.ip6.arpa", "d.f.ip6.arpa"}},
      {"duplicates and several families, sorted, each once",
       {"192.168.1.10/24", "10.0.0.1/8", "192.168.1.20/24", "fd12:3456:789a:1::2/64", "fd12:3456:789a:1::3/64",
        "10.200.0.1/8"},
       {"1.0.0.0.a.9.8.7.6.5.4.3.2.1.d.f.ip6.arpa", "1.168.192.in-addr.arpa", "10.in-addr.arpa"}},
      {"no addresses", {}, {}},
  };
  for (const ZoneRow& r : rows) {
    std::vector<InterfaceAddress> addrs;
    for (const auto& a : r.addrs) addrs.push_back(ifaddr(a));
    const auto got = home_network_from(std::nullopt, addrs).reverse_zones;
    if (got != r.zones)
      FAIL(nxdns::log::cat(r.situation, ": got ", joined(got), ", want ", joined(r.zones)).c_str());
  }
}

TEST(HomeNetworkFrom, GatewayPrivacy) {
  struct Row {
    const char* situation;
    const char* gw;  // nullptr: no default route
    const char* router;  // "" when the gateway is not a home router
  };
  const Row rows[] = {
      {"RFC 1918 192.168/16", "192.168.1.1", "192.168.1.1:53"},
      {"RFC 1918 10/8", "10.0.0.1", "10.0.0.1:53"},
      {"RFC 1918 172.16/12", "172.31.255.254", "172.31.255.254:53"},
      {"RFC 6598 shared space", "100.64.0.1", "100.64.0.1:53"},
      {"link-local", "169.254.1.1", "169.254.1.1:53"},
      {"public: not a home router", "192.0.2.1", ""},
      {"just outside 172.16/12", "172.32.0.1", ""},
      {"just outside 100.64/10", "100.128.0.1", ""},
      {"no default route", nullptr, ""},
  };
  for (const Row& r : rows) {
    std::optional<Gateway> gw;
    if (r.gw) gw = gateway(r.gw, "wlan0");
    const auto net = home_network_from(gw, {ifaddr("192.168.1.10/24", "wlan0")});
    const std::string got = net.router ? net.router->to_string() : "";
    if (got != r.router) FAIL(nxdns::log::cat(r.situation, ": router ", got, ", want ", r.router).c_str());
    // The interface goes with the router: none without one.
    const std::string want_if = *r.router ? "wlan0" : "";
    if (net.interface != want_if)
      FAIL(nxdns::log::cat(r.situation, ": interface '", net.interface, "', want '", want_if, "'").c_str());
    // The zones do not depend on the gateway.
    CHECK(net.reverse_zones == std::vector<std::string>{"1.168.192.in-addr.arpa"});
  }
}
