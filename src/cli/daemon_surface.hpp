#pragma once
// Where a running daemon's HTTP surface is, for the commands that act on
// it (`nxdns cache flush`, `nxdns reload`): --http ADDR, else http.listen of
// --config FILE, else 127.0.0.1:8053. A wildcard listen address is reached
// through loopback.
#include <optional>

#include "cli/args.hpp"
#include "net/endpoint.hpp"

namespace nxdns::cli {

// The options daemon_surface() reads, for the tables of the commands that
// call it.
inline constexpr OptionSpec surface_http_option{
    "http", '\0', "ADDR:PORT",
    "the daemon's HTTP surface (default: http.listen of --config, else 127.0.0.1:8053)"};
inline constexpr OptionSpec surface_config_option{"config", 'c', "FILE", "configuration file to read http.listen from"};

// nullopt after printing "nxdns COMMAND: why" to stderr; *exit_code is then
// what the command should return.
std::optional<net::Endpoint> daemon_surface(const Parsed& p, const char* command, int* exit_code);

}  // namespace nxdns::cli
