#include "app/route_inputs.hpp"

#include "log/log.hpp"

namespace nxdns::app {

route::RouteInputs route_inputs(const config::Config& cfg, const std::optional<route::HomeNetwork>& home) {
  route::RouteInputs in;
  for (std::size_t i = 0; i < cfg.local.zones.size(); ++i) {
    const auto& z = cfg.local.zones[i];
    in.zones.push_back({z.zone, z.servers, log::cat("local_zones[", i, "] (line ", z.line, ")")});
  }
  switch (cfg.local.home_router.mode) {
    case config::HomeRouter::Mode::off:
      break;
    case config::HomeRouter::Mode::address:
      in.router = cfg.local.home_router.address;
      break;
    case config::HomeRouter::Mode::automatic:
      if (home && home->router) {
        in.router = home->router;
        in.router_reverse_zones = home->reverse_zones;
      }
      break;
  }
  for (const auto& h : cfg.local.hosts_files) in.records.insert(in.records.end(), h.records.begin(), h.records.end());
  in.records.insert(in.records.end(), cfg.local.records.begin(), cfg.local.records.end());
  in.forward_special = cfg.local.forward_special_zones;
  return in;
}

std::string describe_home_router(const config::Config& cfg, const std::optional<route::HomeNetwork>& home) {
  switch (cfg.local.home_router.mode) {
    case config::HomeRouter::Mode::off:
      return "off (home_router: off)";
    case config::HomeRouter::Mode::address:
      return cfg.local.home_router.address.to_string() + " (configured)";
    case config::HomeRouter::Mode::automatic:
      break;
  }
  if (!home || !home->router) return "none found (home_router: auto; no default gateway with a private address)";
  return log::cat(home->router->to_string(), " (found: default gateway on ", home->interface, ")");
}

}  // namespace nxdns::app
