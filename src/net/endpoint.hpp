#pragma once
// An IP address and port, parsed from "192.0.2.1:53" or "[2001:db8::1]:53".
// Host names are never accepted here: the daemon must reach its upstreams
// and bind its listeners without asking DNS (which may be itself).
//
// Accepted text forms (parse_endpoint):
//   "192.0.2.1:53"        IPv4 dotted quad (inet_pton rules: no leading
//                         zeros, exactly four decimal parts) and a port
//   "[2001:db8::1]:53"    IPv6 in brackets and a port
//   "192.0.2.1", "[::1]"  only when a default port is given
// An IPv6 address without brackets is always rejected, even when a default
// port would make it unambiguous to a human: "2001:db8::1:53" could be an
// address or an address plus a port, and guessing would silently bind or dial
// the wrong thing. Zone ids ("fe80::1%eth0") are not supported. Ports are
// decimal, 1..65535.
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nxdns::net {

struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;  // 0 means "unset" (a default-constructed Endpoint)

  int family() const { return addr.ss_family; }
  std::uint16_t port() const;  // host byte order; 0 when unset
  // "192.0.2.1:53" or "[2001:db8::1]:53"; "<unset>" for an unset endpoint.
  std::string to_string() const;
  // Just the address, "192.0.2.1" or "2001:db8::1"; "" when unset.
  std::string host_string() const;
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&addr); }
  // Same family, address, port (and IPv6 scope id). Not a byte compare of
  // sockaddr_storage: padding and sin6_flowinfo do not name a different peer.
  bool operator==(const Endpoint& o) const;
};

// Parses "a.b.c.d:port" or "[v6]:port". When the port is omitted and
// `default_port` is given, it is used. Returns nullopt and sets `why` (when
// not null) to a short reason, without the input text, on error.
std::optional<Endpoint> parse_endpoint(std::string_view text, std::optional<std::uint16_t> default_port,
                                       std::string* why);
// Parses a bare IP literal (v4 or v6, no brackets) with a port. Port 0 is
// allowed here (bind to an ephemeral port, e.g. in test fixtures).
std::optional<Endpoint> make_endpoint(std::string_view ip, std::uint16_t port);
// True for a bare IPv4 or IPv6 literal ("192.0.2.1", "2001:db8::1"); false
// for names, bracketed forms, and anything with a port.
bool is_ip_literal(std::string_view host);
// A decimal port 1..65535: no sign, no spaces, at most five digits.
std::optional<std::uint16_t> parse_port(std::string_view text);

// "host", "host:port", "[v6]" or "[v6]:port" split into parts, without
// judging the host. A bare host with two or more colons is an IPv6 address
// missing its brackets: an error whose text ends with `v6_example` (e.g.
// "[::1]:53"), so each caller shows its own syntax.
struct HostPort {
  std::string_view host;
  std::optional<std::string_view> port_text;  // nullopt: no ":port" part
  bool bracketed = false;
};
std::optional<HostPort> split_host_port(std::string_view text, std::string_view v6_example, std::string* why);
// 127.0.0.0/8, ::1, and IPv4-mapped ::ffff:127.0.0.0/104.
bool is_loopback(const Endpoint& e);
// 0.0.0.0 or :: (a wildcard bind address).
bool is_unspecified(const Endpoint& e);

}  // namespace nxdns::net
