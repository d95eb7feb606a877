// `nxdns cache flush [NAME]`: the operator's cache flush. It talks to the
// running daemon's HTTP surface (POST /api/cache/flush), which accepts it
// only from a loopback peer: a LAN client can neither reach it over DNS nor
// over HTTP.
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "cli/http_get.hpp"
#include "config/config.hpp"

namespace nxdns::cli {

namespace {
constexpr int flush_timeout_ms = 3000;
}

int cache_command(const Parsed& p) {
  if (p.positionals.empty() || p.positionals[0] != "flush") {
    std::fprintf(stderr, "nxdns cache: expected 'flush [NAME]'\n");
    return exit_usage;
  }
  net::Endpoint server = *net::parse_endpoint("127.0.0.1:8053", std::nullopt, nullptr);
  if (p.has("http")) {
    std::string why;
    auto e = net::parse_endpoint(p.get("http"), config::kDefaultHttpPort, &why);
    if (!e) {
      std::fprintf(stderr, "nxdns cache: --http: %s\n", why.c_str());
      return exit_usage;
    }
    server = *e;
  } else if (p.has("config")) {
    try {
      config::LoadOptions lo;
      lo.check_files = false;
      const config::Config cfg = config::load_file(p.get("config"), lo);
      if (!cfg.http.enabled) {
        std::fprintf(stderr, "nxdns cache: http.enabled is false in %s: the daemon has no surface to flush through\n",
                     p.get("config").c_str());
        return exit_failure;
      }
      server = cfg.http.listen;
    } catch (const config::Error& e) {
      std::fprintf(stderr, "nxdns cache: %s\n", e.what());
      return exit_usage;
    }
  }
  // A wildcard listen address is reached through loopback.
  if (net::is_unspecified(server)) {
    server = *net::make_endpoint(server.family() == AF_INET6 ? "::1" : "127.0.0.1", server.port());
  }
  std::string path = "/api/cache/flush";
  if (p.positionals.size() > 1) path += "?name=" + url_encode(p.positionals[1]);
  auto r = http_post(server, path, flush_timeout_ms);
  if (!r) {
    std::fprintf(stderr, "nxdns cache: no answer from %s (is the daemon running with http.enabled?)\n",
                 server.to_string().c_str());
    return exit_failure;
  }
  std::fputs(r->body.c_str(), r->status == 200 ? stdout : stderr);
  if (!r->body.empty() && r->body.back() != '\n') std::fputc('\n', r->status == 200 ? stdout : stderr);
  return r->status == 200 ? exit_ok : exit_failure;
}

}  // namespace nxdns::cli
