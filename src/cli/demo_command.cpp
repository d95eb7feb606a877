#include <cstdio>

#include "cli/commands.hpp"

namespace nxdns::cli {

int demo_command(const Parsed&) {
  std::fprintf(stderr, "nxdns demo: not built yet\n");
  return exit_failure;
}

}  // namespace nxdns::cli
