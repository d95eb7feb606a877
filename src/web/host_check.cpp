#include "web/host_check.hpp"

#include <netinet/in.h>

#include <cstring>

#include "net/host_name.hpp"

namespace nxdns::web {

namespace {

// The address alone: a Host literal carries no port worth comparing (see
// the header) and no scope (browsers do not send zone ids).
bool same_address(const net::Endpoint& a, const net::Endpoint& b) {
  if (a.len == 0 || b.len == 0 || a.family() != b.family()) return false;
  if (a.family() == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(&a.addr)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&b.addr)->sin_addr.s_addr;
  }
  if (a.family() == AF_INET6) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(&a.addr)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&b.addr)->sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

bool any_same(const std::vector<net::Endpoint>& list, const net::Endpoint& e) {
  for (const auto& x : list)
    if (same_address(x, e)) return true;
  return false;
}

bool address_is_ours(const net::Endpoint& e, const HostRules& r) {
  if (same_address(e, r.listen) || any_same(r.allowed.addresses, e)) return true;
  // A wildcard serves all of 127.0.0.0/8, which getifaddrs lists as the
  // one address 127.0.0.1.
  return net::is_unspecified(r.listen) && (net::is_loopback(e) || any_same(r.machine_addresses, e));
}

bool name_is_ours(const std::string& name, const HostRules& r) {
  for (const auto& n : r.allowed.names)
    if (n == name) return true;
  const bool loopback = net::is_loopback(r.listen);
  if ((loopback || net::is_unspecified(r.listen)) && name == "localhost") return true;
  if (loopback || r.machine_name.empty()) return false;
  // "pi.lan" is also typed "pi" (the resolver's search domain) and "pi"
  // is also "pi.local" (mDNS); no other suffix is ours.
  const std::string_view full = r.machine_name;
  const std::string_view shortname = full.substr(0, full.find('.'));
  return name == full || name == shortname || name == std::string(shortname) + ".local";
}

}  // namespace

HostVerdict judge_host(std::span<const std::string_view> host_lines, bool http_1_0, const HostRules& rules) {
  if (host_lines.size() > 1) return HostVerdict::malformed;
  if (host_lines.empty() || host_lines.front().empty()) return http_1_0 ? HostVerdict::absent : HostVerdict::malformed;
  const std::string_view value = host_lines.front();
  const auto hp = net::split_host_port(value, "", nullptr);
  if (!hp || hp->host.empty()) return HostVerdict::malformed;
  if (hp->port_text && !net::parse_port(*hp->port_text)) return HostVerdict::malformed;
  if (hp->bracketed) {
    const auto e = net::make_endpoint(hp->host, 0);
    if (!e || e->family() != AF_INET6) return HostVerdict::malformed;
    return address_is_ours(*e, rules) ? HostVerdict::ours : HostVerdict::foreign;
  }
  // Without brackets the host has no colon (split_host_port refused two,
  // and one is the port's), so a literal here is IPv4.
  if (const auto e = net::make_endpoint(hp->host, 0)) {
    return address_is_ours(*e, rules) ? HostVerdict::ours : HostVerdict::foreign;
  }
  // Anything else that is not a host name ("a_b", "x@y") is some name a
  // URL may carry, but never one of ours.
  const auto name = net::normalize_host_name(hp->host);
  return name && name_is_ours(*name, rules) ? HostVerdict::ours : HostVerdict::foreign;
}

bool served(HostVerdict v) { return v == HostVerdict::ours || v == HostVerdict::absent; }

const char* describe(HostVerdict v) {
  switch (v) {
    case HostVerdict::ours: return "ours";
    case HostVerdict::absent: return "absent";
    case HostVerdict::malformed: return "malformed";
    case HostVerdict::foreign: return "foreign";
  }
  return "?";
}

}  // namespace nxdns::web
