#pragma once
// What this machine is called and where it can be reached, as the Host
// check (host_check.hpp) needs them for a surface bound to a LAN or
// wildcard address. Read from the system each time: a Pi's DHCP lease or
// IPv6 prefix may change while the daemon runs.
#include <string>
#include <vector>

#include "net/endpoint.hpp"

namespace nxdns::web {

// gethostname(), normalized (lowercase, no trailing dot); "" when it is not
// a host name (unset, or not RFC 1123).
std::string machine_name();
// Every IPv4 and IPv6 address of every interface (getifaddrs), loopback
// included, ports 0; empty when the system cannot say.
std::vector<net::Endpoint> machine_addresses();

}  // namespace nxdns::web
