#include "net/endpoint.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace nxdns::net {
namespace {

// inet_pton needs a NUL-terminated string. A string_view may hold an
// embedded NUL ("1.2.3.4\0junk"), which c_str() would silently cut at: such
// input is rejected rather than half-parsed.
bool to_c_string(std::string_view s, std::string& out) {
  if (s.empty() || s.size() >= INET6_ADDRSTRLEN) return false;
  if (s.find('\0') != std::string_view::npos) return false;
  out.assign(s);
  return true;
}

void set_why(std::string* why, const char* text) {
  if (why) *why = text;
}

}  // namespace

std::optional<std::uint16_t> parse_port(std::string_view s) {
  // At most 5 digits so the accumulation below cannot overflow; a sign, a
  // space or a hex prefix is not a port.
  if (s.empty() || s.size() > 5) return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v == 0 || v > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(v);
}

std::uint16_t Endpoint::port() const {
  if (len == 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

std::string Endpoint::host_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (len == 0) return {};
  if (addr.ss_family == AF_INET) {
    if (!inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, buf, sizeof buf)) return {};
  } else if (addr.ss_family == AF_INET6) {
    if (!inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr, buf, sizeof buf)) return {};
  } else {
    return {};
  }
  return buf;
}

std::string Endpoint::to_string() const {
  if (len == 0) return "<unset>";
  const std::string host = host_string();
  const std::string p = std::to_string(port());
  if (addr.ss_family == AF_INET6) return "[" + host + "]:" + p;
  return host + ":" + p;
}

bool Endpoint::operator==(const Endpoint& o) const {
  if (len != o.len || family() != o.family()) return false;
  if (len == 0) return true;
  if (family() == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    const auto* b = reinterpret_cast<const sockaddr_in*>(&o.addr);
    return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
  }
  if (family() == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    const auto* b = reinterpret_cast<const sockaddr_in6*>(&o.addr);
    return a->sin6_port == b->sin6_port && a->sin6_scope_id == b->sin6_scope_id &&
           std::memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
  }
  return false;
}

std::optional<Endpoint> make_endpoint(std::string_view ip, std::uint16_t port) {
  std::string s;
  if (!to_c_string(ip, s)) return std::nullopt;
  Endpoint e;
  if (s.find(':') == std::string::npos) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    if (inet_pton(AF_INET, s.c_str(), &sin.sin_addr) != 1) return std::nullopt;
    std::memcpy(&e.addr, &sin, sizeof sin);
    e.len = sizeof sin;
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(port);
    if (inet_pton(AF_INET6, s.c_str(), &sin6.sin6_addr) != 1) return std::nullopt;
    std::memcpy(&e.addr, &sin6, sizeof sin6);
    e.len = sizeof sin6;
  }
  return e;
}

bool is_ip_literal(std::string_view host) { return make_endpoint(host, 0).has_value(); }

std::optional<HostPort> split_host_port(std::string_view text, std::string_view v6_example, std::string* why) {
  HostPort hp;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) {
      set_why(why, "missing ']' after IPv6 address");
      return std::nullopt;
    }
    hp.host = text.substr(1, close - 1);
    hp.bracketed = true;
    const auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        set_why(why, "expected ':port' after ']'");
        return std::nullopt;
      }
      hp.port_text = rest.substr(1);
    }
    return hp;
  }
  const auto first = text.find(':');
  if (first != std::string_view::npos && text.find(':', first + 1) != std::string_view::npos) {
    if (why) *why = "IPv6 addresses need brackets, e.g. " + std::string(v6_example);
    return std::nullopt;
  }
  hp.host = text.substr(0, first);
  if (first != std::string_view::npos) hp.port_text = text.substr(first + 1);
  return hp;
}

std::optional<Endpoint> parse_endpoint(std::string_view text, std::optional<std::uint16_t> default_port,
                                       std::string* why) {
  if (text.empty()) {
    set_why(why, "empty address");
    return std::nullopt;
  }
  auto hp = split_host_port(text, "[::1]:53", why);
  if (!hp) return std::nullopt;
  const std::string_view host = hp->host;
  const std::optional<std::string_view> port_text = hp->port_text;
  const bool bracketed = hp->bracketed;

  if (host.empty()) {
    set_why(why, "missing IP address");
    return std::nullopt;
  }
  std::uint16_t port = 0;
  if (port_text) {
    if (port_text->empty()) {
      set_why(why, "empty port after ':'");
      return std::nullopt;
    }
    const auto p = parse_port(*port_text);
    if (!p) {
      set_why(why, "port must be a decimal number from 1 to 65535");
      return std::nullopt;
    }
    port = *p;
  } else if (default_port) {
    port = *default_port;
  } else {
    set_why(why, "missing ':port'");
    return std::nullopt;
  }

  const bool v6_text = host.find(':') != std::string_view::npos;
  if (bracketed && !v6_text) {
    set_why(why, "brackets are only for IPv6 addresses");
    return std::nullopt;
  }
  auto e = make_endpoint(host, port);
  if (!e) {
    if (bracketed) {
      set_why(why, "not a valid IPv6 address");
    } else {
      bool dotted = true;
      for (char c : host) dotted = dotted && ((c >= '0' && c <= '9') || c == '.');
      set_why(why, dotted ? "not a valid IPv4 address"
                          : "not an IP address (host names are not accepted here; use an IP literal)");
    }
    return std::nullopt;
  }
  return e;
}

bool is_loopback(const Endpoint& e) {
  if (e.len == 0) return false;
  if (e.family() == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&e.addr);
    return (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
  }
  if (e.family() == AF_INET6) {
    const auto* a = &reinterpret_cast<const sockaddr_in6*>(&e.addr)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(a)) return true;
    return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
  }
  return false;
}

bool is_unspecified(const Endpoint& e) {
  if (e.len == 0) return false;
  if (e.family() == AF_INET) return reinterpret_cast<const sockaddr_in*>(&e.addr)->sin_addr.s_addr == INADDR_ANY;
  if (e.family() == AF_INET6)
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(&e.addr)->sin6_addr);
  return false;
}

}  // namespace nxdns::net
