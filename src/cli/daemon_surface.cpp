#include "cli/daemon_surface.hpp"

#include <cstdio>

#include "cli/commands.hpp"
#include "config/config.hpp"

namespace nxdns::cli {

std::optional<net::Endpoint> daemon_surface(const Parsed& p, const char* command, int* exit_code) {
  net::Endpoint server = *net::parse_endpoint("127.0.0.1:8053", std::nullopt, nullptr);
  if (p.has("http")) {
    std::string why;
    auto e = net::parse_endpoint(p.get("http"), config::kDefaultHttpPort, &why);
    if (!e) {
      std::fprintf(stderr, "nxdns %s: --http: %s\n", command, why.c_str());
      *exit_code = exit_usage;
      return std::nullopt;
    }
    server = *e;
  } else if (p.has("config")) {
    try {
      config::LoadOptions lo;
      lo.check_files = false;
      const config::Config cfg = config::load_file(p.get("config"), lo);
      if (!cfg.http.enabled) {
        std::fprintf(stderr, "nxdns %s: http.enabled is false in %s: the daemon has no surface to talk to\n", command,
                     p.get("config").c_str());
        *exit_code = exit_failure;
        return std::nullopt;
      }
      server = cfg.http.listen;
    } catch (const config::Error& e) {
      std::fprintf(stderr, "nxdns %s: %s\n", command, e.what());
      *exit_code = exit_usage;
      return std::nullopt;
    }
  }
  if (net::is_unspecified(server)) {
    server = *net::make_endpoint(server.family() == AF_INET6 ? "::1" : "127.0.0.1", server.port());
  }
  return server;
}

}  // namespace nxdns::cli
