#include <cstdio>

#include "app/daemon.hpp"
#include "cli/commands.hpp"
#include "config/config.hpp"
#include "log/log.hpp"

namespace nxdns::cli {

namespace {
std::optional<log::Level> parse_level(const std::string& s) {
  if (s == "debug") return log::Level::debug;
  if (s == "info") return log::Level::info;
  if (s == "warn") return log::Level::warn;
  if (s == "error") return log::Level::error;
  return std::nullopt;
}

int run_command(const Parsed& p) {
  if (!p.has("config")) {
    std::fprintf(stderr, "nxdns run: --config FILE is required\n");
    return exit_usage;
  }
  config::Config cfg;
  try {
    cfg = config::load_file(p.get("config"));
  } catch (const config::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return exit_usage;
  }
  log::set_level(cfg.log_level);
  std::optional<log::Level> override_level;
  if (p.has("log-level")) {
    auto l = parse_level(p.get("log-level"));
    if (!l) {
      std::fprintf(stderr, "nxdns run: --log-level wants debug, info, warn or error\n");
      return exit_usage;
    }
    log::set_level(*l);
    override_level = l;
  }
  std::string why;
  auto daemon = app::Daemon::create(cfg, app::default_transport_factory(), &why);
  if (!daemon) {
    log::error("cannot start: ", why);
    return exit_failure;
  }
  if (override_level) daemon->keep_log_level(*override_level);
  return daemon->run();
}

constexpr OptionSpec run_options[] = {{"config", 'c', "FILE", "configuration file (YAML)"},
                                      {"log-level", 'l', "LEVEL", "override log.level: debug, info, warn or error"}};
}  // namespace

constinit const CommandSpec run_spec{"run",
                                     "serve DNS with the given configuration",
                                     "nxdns run --config FILE [--log-level LEVEL]",
                                     run_options,
                                     "nxdns run -c /etc/nxdns/nxdns.yaml",
                                     0,
                                     run_command};

}  // namespace nxdns::cli
