// `nxdns reload`: asks the running daemon to re-read its configuration file
// (POST /api/reload on its loopback HTTP surface) and reports what it said:
// what applied, or the one-line reason it did not (a config error reads
// "FILE:LINE:COL: KEY.PATH: MESSAGE", exactly as at start). The daemon
// reads the file it was started with; this command only carries the
// request, so the answer is the daemon's own validation, as its user.
// SIGHUP does the same without an answer (--pid PID sends it: the
// systemd unit's ExecReload when the daemon has no HTTP surface).
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli/commands.hpp"
#include "cli/daemon_surface.hpp"
#include "cli/http_get.hpp"

namespace nxdns::cli {

namespace {
// A reload reads a small file and binds at most a few sockets on the
// loop; the rest (drains) happens after the answer.
constexpr int reload_timeout_ms = 5000;

int signal_reload(const std::string& pid_text) {
  char* end = nullptr;
  errno = 0;
  const long pid = std::strtol(pid_text.c_str(), &end, 10);
  if (pid_text.empty() || *end != '\0' || errno != 0 || pid <= 1 || pid > 4194304) {
    std::fprintf(stderr, "nxdns reload: --pid wants a process id, got '%s'\n", pid_text.c_str());
    return exit_usage;
  }
  if (::kill(static_cast<pid_t>(pid), SIGHUP) != 0) {
    std::fprintf(stderr, "nxdns reload: cannot signal process %ld: %s\n", pid, std::strerror(errno));
    return exit_failure;
  }
  std::printf("sent SIGHUP to process %ld; the daemon logs whether the file applied\n", pid);
  return exit_ok;
}

int reload_command(const Parsed& p) {
  if (p.has("pid")) return signal_reload(p.get("pid"));
  int code = exit_failure;
  const auto server = daemon_surface(p, "reload", &code);
  if (!server) return code;
  auto r = http_post(*server, "/api/reload", reload_timeout_ms);
  if (!r) {
    std::fprintf(stderr,
                 "nxdns reload: no answer from %s (is the daemon running with http.enabled? without it, "
                 "send SIGHUP: systemctl reload nxdns or kill -HUP PID)\n",
                 server->to_string().c_str());
    return exit_failure;
  }
  const bool ok = r->status == 200;
  std::FILE* out = ok ? stdout : stderr;
  if (!ok && r->status != 422) std::fprintf(stderr, "nxdns reload: HTTP %d from %s\n", r->status, server->to_string().c_str());
  std::fputs(r->body.c_str(), out);
  if (!r->body.empty() && r->body.back() != '\n') std::fputc('\n', out);
  return ok ? exit_ok : exit_failure;
}

constexpr OptionSpec reload_options[] = {
    surface_http_option, surface_config_option,
    {"pid", '\0', "PID", "send SIGHUP to this process instead (no answer: the result is in its log)"}};
}  // namespace

constinit const CommandSpec reload_spec{
    "reload",
    "make the running daemon re-read and apply its configuration file; prints what applied or why not",
    "nxdns reload [--http ADDR:PORT | --config FILE | --pid PID]",
    reload_options,
    "nxdns reload -c /etc/nxdns/nxdns.yaml",
    0,
    reload_command};

}  // namespace nxdns::cli
