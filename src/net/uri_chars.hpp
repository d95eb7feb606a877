#pragma once
// The characters a URL may carry as they are, and the port it names by
// default, for the URLs nxdns hands to libcurl (DoH upstreams, blocklists).
#include <cstdint>
#include <string_view>

namespace nxdns::net {

// The port of an https:// URL that names none (RFC 9110 §4.2.2).
inline constexpr std::uint16_t https_default_port = 443;

// RFC 3986 §3.3-§3.4: path = *( "/" / pchar ), query = *( pchar / "/" /
// "?" ), pchar = unreserved / pct-encoded / sub-delims / ":" / "@". With
// `query`, "?" is allowed too. Anything else would be re-encoded or refused
// by libcurl, so the URL logged would not be the URL asked for.
bool is_uri_target(std::string_view text, bool query);

}  // namespace nxdns::net
