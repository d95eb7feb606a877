#pragma once
// What the route table is built from: the configuration's local names and,
// with `home_router: auto`, the home network found on this host.
#include <optional>
#include <string>

#include "config/config.hpp"
#include "route/home_network.hpp"
#include "route/route_table.hpp"

namespace nxdns::app {

// `home` is the network found (automatic mode only; ignored otherwise).
route::RouteInputs route_inputs(const config::Config& cfg, const std::optional<route::HomeNetwork>& home);

// One line for the log and the status page: which router serves the LAN's
// names, and how it was chosen.
std::string describe_home_router(const config::Config& cfg, const std::optional<route::HomeNetwork>& home);

}  // namespace nxdns::app
