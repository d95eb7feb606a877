#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "net/endpoint.hpp"

namespace nxdns::cli {

struct HttpResponse {
  int status = 0;
  std::string body;
};

// A minimal blocking HTTP/1.0 GET, for the demo's metrics excerpt and tests.
// Returns nullopt on connect/read failure or timeout.
std::optional<HttpResponse> http_get(const net::Endpoint& server, const std::string& path, int timeout_ms);
// The same with POST, an empty body and the X-Nxdns-Request header (operator
// actions: `nxdns cache flush`, `nxdns reload`).
std::optional<HttpResponse> http_post(const net::Endpoint& server, const std::string& path, int timeout_ms);
// RFC 3986 percent-encoding of everything but the unreserved characters, for
// a query-string value.
std::string url_encode(std::string_view v);

}  // namespace nxdns::cli
