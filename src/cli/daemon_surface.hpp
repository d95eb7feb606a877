#pragma once
// Where a running daemon's HTTP surface is, for the commands that act on
// it (`nxdns cache flush`, `nxdns reload`): --http ADDR, else http.listen of
// --config FILE, else 127.0.0.1:8053. A wildcard listen address is reached
// through loopback.
#include <optional>

#include "cli/args.hpp"
#include "net/endpoint.hpp"

namespace nxdns::cli {

// nullopt after printing "nxdns COMMAND: why" to stderr; *exit_code is then
// what the command should return.
std::optional<net::Endpoint> daemon_surface(const Parsed& p, const char* command, int* exit_code);

}  // namespace nxdns::cli
