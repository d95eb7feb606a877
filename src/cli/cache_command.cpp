// `nxdns cache flush [NAME]`: the operator's cache flush. It talks to the
// running daemon's HTTP surface (POST /api/cache/flush), which accepts it
// only from a loopback peer carrying the X-Nxdns-Request header
// (web/action_guard.hpp): a LAN client can neither reach it over DNS nor
// over HTTP, and a web page cannot either.
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "cli/daemon_surface.hpp"
#include "cli/http_get.hpp"

namespace nxdns::cli {

namespace {
constexpr int flush_timeout_ms = 3000;

int cache_command(const Parsed& p) {
  if (p.positionals.empty() || p.positionals[0] != "flush") {
    std::fprintf(stderr, "nxdns cache: expected 'flush [NAME]'\n");
    return exit_usage;
  }
  int code = exit_failure;
  const auto found = daemon_surface(p, "cache", &code);
  if (!found) return code;
  const net::Endpoint server = *found;
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

constexpr OptionSpec cache_options[] = {surface_http_option, surface_config_option};
}  // namespace

constinit const CommandSpec cache_spec{
    "cache",
    "cache flush [NAME]: empty the running daemon's cache, or every entry under NAME",
    "nxdns cache flush [NAME] [--http ADDR:PORT | --config FILE]",
    cache_options,
    "nxdns cache flush\n"
    "nxdns cache flush www.example.com -c /etc/nxdns/nxdns.yaml",
    2,
    cache_command};

}  // namespace nxdns::cli
