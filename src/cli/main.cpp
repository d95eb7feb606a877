// nxdns: DNS forwarder for a household appliance. See `nxdns help`.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/help.hpp"

int main(int argc, char** argv) {
  using namespace nxdns::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  auto r = parse(args);
  if (!r.parsed) {
    // A known command's error already points to that command's --help.
    if (r.command) {
      std::fprintf(stderr, "nxdns: %s\n", r.error.c_str());
    } else {
      std::fprintf(stderr, "nxdns: %s\n\n%s", r.error.c_str(), usage().c_str());
    }
    return exit_usage;
  }
  return find_command(r.parsed->command)->run(*r.parsed);
}
