#pragma once
// Upstream URL syntax, split out of the YAML walk so it can be tested and
// fuzzed on its own. Internal to config/: other components read the parsed
// fields of config::Upstream instead.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "net/endpoint.hpp"

namespace nxdns::config::detail {

struct ParsedUrl {
  Protocol protocol = Protocol::dot;
  std::string host;                // as written, IPv6 without brackets
  std::optional<net::Endpoint> ip; // set when host is an IP literal
  std::uint16_t port = 0;          // explicit, or 853 (tls) / 443 (https)
  std::string path;                // https only; "" for tls
};

// Accepts tls://IP[:port] and https://HOST[:port]/path. Rejects userinfo,
// query strings and fragments (see docs/reference/config.md for why).
// On error returns nullopt and sets `why`, which never echoes the whole URL
// (it may carry credentials).
std::optional<ParsedUrl> parse_upstream_url(std::string_view url, std::string* why);

// `s` made safe for a one-line message: quoted, control and non-ASCII bytes
// escaped, cut at `max` bytes of input.
std::string quote(std::string_view s, std::size_t max = 64);

}  // namespace nxdns::config::detail
