#pragma once
// An IP address and port, parsed from "192.0.2.1:53" or "[2001:db8::1]:53".
// Host names are never accepted here: the daemon must reach its upstreams
// and bind its listeners without asking DNS (which may be itself).
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nxdns::net {

struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;

  int family() const { return addr.ss_family; }
  std::uint16_t port() const;
  // "192.0.2.1:53" or "[2001:db8::1]:53"
  std::string to_string() const;
  // Just the address, "192.0.2.1" or "2001:db8::1".
  std::string host_string() const;
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&addr); }
  bool operator==(const Endpoint& o) const;
};

// Parses "a.b.c.d:port" or "[v6]:port". When the port is omitted and
// `default_port` is given, it is used. Returns nullopt and sets `why` on error.
std::optional<Endpoint> parse_endpoint(std::string_view text, std::optional<std::uint16_t> default_port,
                                       std::string* why);
// Parses a bare IP literal (v4 or v6, no brackets) with a port.
std::optional<Endpoint> make_endpoint(std::string_view ip, std::uint16_t port);
bool is_ip_literal(std::string_view host);
bool is_loopback(const Endpoint& e);

}  // namespace nxdns::net
