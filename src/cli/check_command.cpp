#include <cstdio>

#include "cli/commands.hpp"
#include "config/config.hpp"

namespace nxdns::cli {

int check_command(const Parsed& p) {
  if (!p.has("config")) {
    std::fprintf(stderr, "nxdns check: --config FILE is required\n");
    return exit_usage;
  }
  config::Config cfg;
  try {
    cfg = config::load_file(p.get("config"));
  } catch (const config::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return exit_usage;
  }
  std::size_t enabled = 0;
  for (const auto& u : cfg.upstreams) enabled += u.enabled;
  std::printf("%s: configuration ok (%zu listen address(es), %zu upstream(s), %zu enabled)\n", cfg.source.c_str(),
              cfg.listen.size(), cfg.upstreams.size(), enabled);
  if (p.has("offline")) return exit_ok;
  std::fprintf(stderr, "nxdns check: upstream probing is not available in this build; use --offline\n");
  return exit_failure;
}

}  // namespace nxdns::cli
