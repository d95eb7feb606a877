#include "server/access_control.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace nxdns::server {

namespace {

std::size_t addr_bytes(int family) { return family == AF_INET6 ? 16 : 4; }

// Zeroes every bit of `c.addr` below the prefix; returns whether any was set.
bool clear_host_bits(Cidr& c) {
  bool had = false;
  const std::size_t n = addr_bytes(c.family);
  for (std::size_t i = 0; i < n; ++i) {
    const int keep = std::clamp(static_cast<int>(c.prefix) - static_cast<int>(i) * 8, 0, 8);
    const auto mask = static_cast<std::uint8_t>(keep == 0 ? 0 : 0xFFu << (8 - keep));
    if (c.addr[i] & ~mask) had = true;
    c.addr[i] &= mask;
  }
  return had;
}

// Constant-initialised prefixes: the defaults exist before any code runs.
constexpr Cidr v4(std::uint8_t a, std::uint8_t b, std::uint8_t prefix) {
  Cidr c;
  c.family = AF_INET;
  c.addr[0] = a;
  c.addr[1] = b;
  c.prefix = prefix;
  return c;
}
constexpr Cidr v6(std::uint8_t a, std::uint8_t b, std::uint8_t last, std::uint8_t prefix) {
  Cidr c;
  c.family = AF_INET6;
  c.addr[0] = a;
  c.addr[1] = b;
  c.addr[15] = last;
  c.prefix = prefix;
  return c;
}

}  // namespace

std::string Cidr::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(family, addr.data(), buf, sizeof buf);
  return std::string(buf) + "/" + std::to_string(prefix);
}

std::optional<Cidr> parse_cidr(std::string_view text, std::string* why) {
  auto bad = [&](std::string reason) -> std::optional<Cidr> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const std::size_t slash = text.find('/');
  const std::string ip(text.substr(0, slash));
  Cidr c;
  if (ip.find(':') != std::string::npos) {
    c.family = AF_INET6;
    if (::inet_pton(AF_INET6, ip.c_str(), c.addr.data()) != 1) return bad("not an IPv6 address or prefix");
  } else {
    c.family = AF_INET;
    if (::inet_pton(AF_INET, ip.c_str(), c.addr.data()) != 1) return bad("not an IPv4 address or prefix");
  }
  const int max = static_cast<int>(addr_bytes(c.family) * 8);
  int prefix = max;
  if (slash != std::string_view::npos) {
    const std::string_view p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3) return bad("the prefix length after '/' must be 0.." + std::to_string(max));
    prefix = 0;
    for (char ch : p) {
      if (ch < '0' || ch > '9') return bad("the prefix length after '/' must be 0.." + std::to_string(max));
      prefix = prefix * 10 + (ch - '0');
    }
    if (prefix > max) return bad("the prefix length after '/' must be 0.." + std::to_string(max));
  }
  c.prefix = static_cast<std::uint8_t>(prefix);
  if (clear_host_bits(c)) return bad("address has bits set past the /" + std::to_string(prefix) + " prefix (did you mean " + c.to_string() + "?)");
  return c;
}

namespace {
constexpr std::array<AccessRule, 11> default_rules = {{
    {v4(127, 0, 8), Access::allow},        // loopback
    {v4(10, 0, 8), Access::allow},         // RFC 1918
    {v4(172, 16, 12), Access::allow},      // RFC 1918
    {v4(192, 168, 16), Access::allow},     // RFC 1918
    {v4(100, 64, 10), Access::allow},      // RFC 6598 shared address space (CGNAT)
    {v4(169, 254, 16), Access::allow},     // RFC 3927 link-local
    {v6(0, 0, 1, 128), Access::allow},     // ::1 loopback
    {v6(0xfe, 0x80, 0, 10), Access::allow},  // fe80::/10, RFC 4291 link-local
    {v6(0xfc, 0x00, 0, 7), Access::allow},   // fc00::/7, RFC 4193 unique local
    {v4(0, 0, 0), Access::refuse},         // everyone else
    {v6(0, 0, 0, 0), Access::refuse},
}};
}  // namespace

std::span<const AccessRule> default_access_rules() { return default_rules; }

AccessControl::AccessControl(const std::vector<AccessRule>& rules) {
  rules_ = rules;
  for (const AccessRule& d : default_access_rules()) {
    const bool replaced = std::any_of(rules.begin(), rules.end(), [&](const AccessRule& r) { return r.net == d.net; });
    if (!replaced) rules_.push_back(d);
  }
  // Longest prefix first, so the first covering rule is the most specific.
  std::stable_sort(rules_.begin(), rules_.end(),
                   [](const AccessRule& a, const AccessRule& b) { return a.net.prefix > b.net.prefix; });
}

bool cidr_contains(const Cidr& net, int family, const std::uint8_t* addr) {
  if (net.family != family) return false;
  const std::size_t full = net.prefix / 8;
  if (std::memcmp(net.addr.data(), addr, full) != 0) return false;
  const int rest = net.prefix % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xFFu << (8 - rest));
  return (net.addr[full] & mask) == (addr[full] & mask);
}

Access AccessControl::decide(int family, const std::uint8_t* addr) const {
  static constexpr std::uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  if (family == AF_INET6 && std::memcmp(addr, v4_mapped, sizeof v4_mapped) == 0) {
    family = AF_INET;
    addr += 12;
  }
  for (const AccessRule& r : rules_) {
    if (cidr_contains(r.net, family, addr)) return r.access;
  }
  return Access::refuse;
}

Access AccessControl::decide(const sockaddr* peer) const {
  if (peer->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(peer);
    return decide(AF_INET, reinterpret_cast<const std::uint8_t*>(&in->sin_addr));
  }
  if (peer->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(peer);
    return decide(AF_INET6, in6->sin6_addr.s6_addr);
  }
  return Access::refuse;
}

}  // namespace nxdns::server
