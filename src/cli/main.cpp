// nxdns: DNS forwarder for a household appliance. See `nxdns help`.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/commands.hpp"

int main(int argc, char** argv) {
  using namespace nxdns::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  auto r = parse(args);
  if (!r.parsed) {
    std::fprintf(stderr, "nxdns: %s\n\n%s", r.error.c_str(), usage().c_str());
    return exit_usage;
  }
  const Parsed& p = *r.parsed;
  if (p.command == "run") return run_command(p);
  if (p.command == "check") return check_command(p);
  if (p.command == "burst") return burst_command(p);
  if (p.command == "demo") return demo_command(p);
  if (p.command == "cache") return cache_command(p);
  if (p.command == "reload") return reload_command(p);
  if (p.command == "why") return why_command(p);
  if (p.command == "version") return version_command();
  std::fputs(usage().c_str(), stdout);
  return exit_ok;
}
