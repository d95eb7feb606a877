#pragma once
// The pure parts of DNS-over-HTTPS (RFC 8484): request encoding, response
// header checks and the mapping of libcurl's result codes onto Cause. No
// I/O, so every rule here is unit-tested without a server.
#include <curl/curl.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "dns/message.hpp"
#include "net/endpoint.hpp"
#include "upstream/transport.hpp"

namespace nxdns::upstream {

// RFC 8484 §6: the media type of a DNS message, request and response.
inline constexpr std::string_view doh_media_type = "application/dns-message";
// RFC 8484 §6 bounds a DNS message at the DNS wire limit; a larger body
// cannot be an answer, so its transfer is cut short.
inline constexpr std::size_t doh_max_response = dns::max_stream_message;

// base64url (RFC 4648 §5) without '=' padding, as the GET "dns" parameter
// wants it (RFC 8484 §4.1: "padding characters ... MUST NOT be included").
std::string base64url_encode(dns::ByteView data);

// "https://NAME:PORT/PATH": the URL curl is given. Its host is the TLS name,
// not the configured URL's host: curl presents the URL host as SNI and checks
// the certificate against it, so this makes tls_name the verified identity
// (the address to dial comes from doh_resolve_entry, never from DNS).
std::string doh_base_url(const std::string& tls_name, std::uint16_t port, const std::string& path);
// The GET form of a request for `wire` (RFC 8484 §4.1): base URL, then
// "?dns=" (or "&dns=" when the path already carries a query string).
std::string doh_get_url(const std::string& base_url, dns::ByteView wire);
// The CURLOPT_RESOLVE line pinning NAME:PORT to the configured address
// ("doh.test:443:192.0.2.1", "doh.test:443:[2001:db8::1]").
std::string doh_resolve_entry(const std::string& tls_name, const net::Endpoint& address);

// True when a Content-Type header value names application/dns-message:
// type and subtype compared case-insensitively (RFC 9110 §8.3.1), optional
// whitespace and parameters after ';' ignored. nullptr (no header) is false.
bool is_dns_message_type(const char* content_type);
// A header value fit for a log line: printable ASCII only, cut at 64.
std::string sanitize_header_value(std::string_view v);

// The Cause of a transfer libcurl ended with `rc` (not CURLE_OK).
// `connected`: the TCP connection was up (a timeout before that is a dial
// failure, after it the server's silence).
Cause cause_of_curl_error(CURLcode rc, bool connected);

}  // namespace nxdns::upstream
