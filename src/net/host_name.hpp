#pragma once
// Host names as the configuration (tls_name, upstream URLs,
// http.allowed_hosts) and an HTTP Host header write them: RFC 1123 §2.1
// labels (letters, digits, hyphens; 1..63 octets, not starting or ending
// with a hyphen), at most 253 octets in all, and not all digits and dots
// ("1.2.3" or "192.168.1.256" is a mistyped address, not a name).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/endpoint.hpp"

namespace nxdns::net {

// No trailing dot: legal DNS, but not legal SNI (RFC 6066 §3).
bool is_host_name(std::string_view s);

// The name in the form it is compared in: lowercase (names are
// case-insensitive, RFC 4343), one trailing dot dropped (the root label
// names the same host). nullopt when `text` is not a host name.
std::optional<std::string> normalize_host_name(std::string_view text);

// Hosts named by the operator (http.allowed_hosts): names normalized as
// above, IP literals as addresses with port 0.
struct HostList {
  std::vector<std::string> names;
  std::vector<Endpoint> addresses;
  bool empty() const { return names.empty() && addresses.empty(); }
};

}  // namespace nxdns::net
