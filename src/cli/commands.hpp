#pragma once
#include "cli/args.hpp"

namespace nxdns::cli {

// Exit codes shared by every command.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  // the command ran and found a problem
inline constexpr int exit_usage = 2;    // bad arguments or configuration

int run_command(const Parsed& p);
int check_command(const Parsed& p);
int burst_command(const Parsed& p);
int demo_command(const Parsed& p);
int cache_command(const Parsed& p);
int reload_command(const Parsed& p);
int why_command(const Parsed& p);
int version_command();

}  // namespace nxdns::cli
