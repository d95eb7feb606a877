#pragma once
// What `home_router: auto` needs to know about the LAN this host sits on:
// the default gateway (the household router, which on almost every home
// network also serves the LAN's names over plain DNS) and the private
// subnets of this host's own addresses, whose reverse zones the router is
// the only one able to answer.
#include <event2/event.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"

namespace nxdns::route {

struct InterfaceAddress {
  std::string interface;   // "eth0"
  int family = 0;          // AF_INET or AF_INET6
  std::uint8_t addr[16]{};  // IPv4 in the first 4 octets
  std::uint8_t prefix = 0;
};

struct HomeNetwork {
  // The IPv4 default gateway, port 53, when there is one and it is a
  // private (RFC 1918, RFC 6598) or link-local address: a gateway with a
  // public address is not a home router, and the LAN's names must not go
  // to it. With several default routes, the lowest metric wins.
  std::optional<net::Endpoint> router;
  std::string interface;  // the router's interface, "" without a router
  // Reverse zones (presentation form, lower case, no trailing dot) of the
  // private subnets of this host's addresses: RFC 1918 and RFC 6598 IPv4
  // prefixes, rounded out to the octet boundary at or above the prefix
  // ("192.168.1.0/24" -> "1.168.192.in-addr.arpa", a /20 -> its /16), and
  // ULA IPv6 prefixes (fc00::/7) rounded to a nibble boundary. Sorted,
  // each once. Loopback and link-local addresses give none.
  std::vector<std::string> reverse_zones;

  bool operator==(const HomeNetwork&) const = default;
};

// The IPv4 default gateway in /proc/net/route's text (hex, host byte order
// of the kernel that wrote it: little-endian on every platform nxdns
// targets), with its interface; the lowest metric among up default routes
// with the gateway flag. nullopt when none, or on unreadable text.
struct Gateway {
  std::uint8_t addr[4]{};
  std::string interface;
  bool operator==(const Gateway&) const = default;
};
std::optional<Gateway> default_gateway_from_proc(std::string_view proc_net_route);

// Pure: the HomeNetwork for a gateway and a host's addresses (the rules
// above).
HomeNetwork home_network_from(const std::optional<Gateway>& gw, const std::vector<InterfaceAddress>& addrs);

// Reads /proc/net/route and getifaddrs(3) now, both of the calling
// thread's network namespace. Interfaces that are down give no addresses.
HomeNetwork discover_home_network();

// Follows route and address changes (a netlink socket on the loop,
// RTMGRP_IPV4_ROUTE, the address groups and RTMGRP_LINK), re-discovers
// after a short settling delay, and calls `changed` only when the result
// differs from the last one. Where netlink is unavailable it re-reads every
// minute instead.
// `changed` must not destroy the watcher.
class HomeNetworkWatcher {
 public:
  // One second after the first message of a burst: a DHCP lease or a link
  // coming up sends a dozen route and address messages within milliseconds,
  // and one re-discovery after them sees the settled result.
  static constexpr loop::Duration settle_delay = std::chrono::seconds(1);
  // Without netlink: a minute, one /proc read and one getifaddrs each.
  static constexpr loop::Duration poll_period = std::chrono::seconds(60);

  using Discover = std::function<HomeNetwork()>;
  // Where changes are learnt: the netlink socket (falling back to polling
  // when it cannot be opened), or polling only.
  enum class Follow { netlink, polling };

  HomeNetworkWatcher(event_base* base, loop::Scheduler& sched, HomeNetwork initial,
                     std::function<void(const HomeNetwork&)> changed);
  // The same with the re-discovery given (discover_home_network above by
  // default), so that the decisions run under a fake source and clock.
  // `base` is not used, and may be null, with Follow::polling.
  HomeNetworkWatcher(event_base* base, loop::Scheduler& sched, HomeNetwork initial,
                     std::function<void(const HomeNetwork&)> changed, Discover discover,
                     Follow follow = Follow::netlink);
  ~HomeNetworkWatcher();
  HomeNetworkWatcher(const HomeNetworkWatcher&) = delete;
  HomeNetworkWatcher& operator=(const HomeNetworkWatcher&) = delete;

  const HomeNetwork& current() const { return current_; }
  // False while it polls instead (no netlink here, or the socket failed).
  bool follows_netlink() const;
  // Times the kernel dropped messages for this socket (ENOBUFS): each made
  // the watcher re-discover, since what it missed is unknown.
  std::uint64_t overflows() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  HomeNetwork current_;
};

}  // namespace nxdns::route
