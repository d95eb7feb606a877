#pragma once
#include <optional>
#include <string>

#include "net/endpoint.hpp"

namespace nxdns::cli {

struct HttpResponse {
  int status = 0;
  std::string body;
};

// A minimal blocking HTTP/1.0 GET, for the demo's metrics excerpt and tests.
// Returns nullopt on connect/read failure or timeout.
std::optional<HttpResponse> http_get(const net::Endpoint& server, const std::string& path, int timeout_ms);

}  // namespace nxdns::cli
