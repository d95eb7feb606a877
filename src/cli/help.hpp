#pragma once
// What `nxdns help`, `nxdns help COMMAND` and `nxdns COMMAND --help` print.
// The text comes from the command tables (CommandSpec); nothing here
// repeats it.
#include <string>
#include <vector>

#include "cli/args.hpp"

namespace nxdns::cli {

// The list of commands, one line each, and how to ask one for its options.
std::string usage();
// One command's synopsis, summary, options (with --help) and example.
std::string command_usage(const CommandSpec& c);

struct HelpAnswer {
  int exit_code;
  std::string text;  // stdout when exit_code is exit_ok, else stderr
};
// `nxdns help [COMMAND]`: the words after `help`.
HelpAnswer help_answer(const std::vector<std::string>& words);

}  // namespace nxdns::cli
