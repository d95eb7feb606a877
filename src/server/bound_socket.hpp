#pragma once
#include <string>

#include "loop/event_handles.hpp"
#include "net/endpoint.hpp"

namespace nxdns::server {

// A non-blocking, close-on-exec socket bound to `ep` (and listening, for
// SOCK_STREAM). IPv6 sockets are v6-only so "0.0.0.0:53" and "[::]:53" can
// both be bound. On failure returns an invalid fd and sets `why` to a
// sentence naming the address and the errno text.
loop::UniqueFd bind_socket(const net::Endpoint& ep, int type, std::string* why);

}  // namespace nxdns::server

namespace nxdns::server {
// The address a socket is bound to (resolves port 0 to the kernel's choice).
net::Endpoint local_endpoint(int fd);
}  // namespace nxdns::server
