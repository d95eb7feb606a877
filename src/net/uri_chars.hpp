#pragma once
// The characters a URL may carry as they are, for the URLs nxdns hands to
// libcurl (DoH upstreams, blocklists).
#include <string_view>

namespace nxdns::net {

// RFC 3986 §3.3-§3.4: path = *( "/" / pchar ), query = *( pchar / "/" /
// "?" ), pchar = unreserved / pct-encoded / sub-delims / ":" / "@". With
// `query`, "?" is allowed too. Anything else would be re-encoded or refused
// by libcurl, so the URL logged would not be the URL asked for.
bool is_uri_target(std::string_view text, bool query);

}  // namespace nxdns::net
