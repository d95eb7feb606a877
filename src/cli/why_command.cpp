// `nxdns why NAME [--type T] [--client IP]`: how the running daemon would
// route a name, and which rule decides it (GET /api/why). It asks the
// daemon rather than reading the configuration itself, so the answer
// includes what only the daemon knows: the home router it found, the
// health of the LAN servers, the hosts files as last (re)loaded.
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "cli/daemon_surface.hpp"
#include "cli/http_get.hpp"

namespace nxdns::cli {

namespace {
constexpr int why_timeout_ms = 3000;

int why_command(const Parsed& p) {
  if (p.positionals.size() != 1) {
    std::fprintf(stderr, "nxdns why: expected one NAME\n");
    return exit_usage;
  }
  int code = exit_failure;
  const auto found = daemon_surface(p, "why", &code);
  if (!found) return code;
  std::string path = "/api/why?name=" + url_encode(p.positionals[0]);
  if (p.has("type")) path += "&type=" + url_encode(p.get("type"));
  if (p.has("client")) path += "&client=" + url_encode(p.get("client"));
  if (!p.has("json")) path += "&format=text";
  auto r = http_get(*found, path, why_timeout_ms);
  if (!r) {
    std::fprintf(stderr, "nxdns why: no answer from %s (is the daemon running with http.enabled?)\n",
                 found->to_string().c_str());
    return exit_failure;
  }
  std::FILE* out = r->status == 200 ? stdout : stderr;
  if (r->status != 200) std::fputs("nxdns why: ", out);
  std::fputs(r->body.c_str(), out);
  if (!r->body.empty() && r->body.back() != '\n') std::fputc('\n', out);
  return r->status == 200 ? exit_ok : (r->status == 400 ? exit_usage : exit_failure);
}

constexpr OptionSpec why_options[] = {{"type", 't', "TYPE", "query type to ask about (default A)"},
                                      {"client", '\0', "IP", "the client's IP address (access control; blocking groups)"},
                                      {"json", '\0', "", "print the daemon's JSON answer"},
                                      surface_http_option,
                                      surface_config_option};
}  // namespace

constinit const CommandSpec why_spec{
    "why",
    "why NAME: how the running daemon routes NAME (local record, zone, LAN server or upstream) and why",
    "nxdns why NAME [--type TYPE] [--client IP] [--json] [--http ADDR:PORT | --config FILE]",
    why_options,
    "nxdns why printer.home.arpa\n"
    "nxdns why www.example.com --type AAAA --client 192.168.1.20",
    1,
    why_command};

}  // namespace nxdns::cli
