#pragma once
// The commands of `nxdns`. Each one's table (options with their help, the
// synopsis, an example) is defined in its own *_command.cpp beside the code
// that reads those options; `nxdns COMMAND --help` prints it, and the list
// of commands is the order in args.cpp.
#include "cli/args.hpp"

namespace nxdns::cli {

// Exit codes shared by every command.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  // the command ran and found a problem
inline constexpr int exit_usage = 2;    // bad arguments or configuration

extern const CommandSpec run_spec;
extern const CommandSpec check_spec;
extern const CommandSpec burst_spec;
extern const CommandSpec demo_spec;
extern const CommandSpec cache_spec;
extern const CommandSpec reload_spec;
extern const CommandSpec why_spec;
extern const CommandSpec version_spec;
extern const CommandSpec help_spec;

}  // namespace nxdns::cli
