// `nxdns help [COMMAND]`, and the text of every command's --help.
#include "cli/help.hpp"

#include <algorithm>
#include <cstdio>

#include "cli/commands.hpp"

namespace nxdns::cli {

namespace {

int help_command(const Parsed& p) {
  const HelpAnswer a = help_answer(p.positionals);
  std::fputs(a.text.c_str(), a.exit_code == exit_ok ? stdout : stderr);
  return a.exit_code;
}

// Not in any table: every command takes it (args.cpp).
constexpr OptionSpec help_option{"help", 'h', "", "show this command's help and exit"};

std::string flag_column(const OptionSpec& o) {
  std::string s = o.short_name ? std::string("  -") + o.short_name + ", --" : std::string("      --");
  s += o.name;
  if (o.takes_value()) s += " " + std::string(o.value);
  return s;
}

std::string padded(std::string s, std::size_t width) {
  s.resize(std::max(width, s.size() + 2), ' ');
  return s;
}

}  // namespace

constinit const CommandSpec help_spec{
    "help", "show the commands, or one command's options", "nxdns help [COMMAND]", {}, "nxdns help burst", 1,
    help_command};

std::string usage() {
  std::size_t width = 0;
  for (const CommandSpec* c : commands()) width = std::max(width, c->name.size());
  std::string s = "usage: nxdns <command> [options]\n\ncommands:\n";
  for (const CommandSpec* c : commands()) s += "  " + padded(std::string(c->name), width + 2) + std::string(c->summary) + "\n";
  s += "\n'nxdns <command> --help' (or 'nxdns help <command>') shows a command's options and an example.\n";
  return s;
}

std::string command_usage(const CommandSpec& c) {
  std::string s = "usage: " + std::string(c.synopsis) + "\n\n" + std::string(c.summary) + "\n\noptions:\n";
  std::size_t width = flag_column(help_option).size();
  for (const OptionSpec& o : c.options) width = std::max(width, flag_column(o).size());
  for (const OptionSpec& o : c.options) s += padded(flag_column(o), width + 2) + std::string(o.help) + "\n";
  s += padded(flag_column(help_option), width + 2) + std::string(help_option.help) + "\n";
  if (!c.example.empty()) {
    s += "\nexample:\n";
    std::string_view rest = c.example;
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      s += "  " + std::string(rest.substr(0, nl)) + "\n";
      rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    }
  }
  return s;
}

HelpAnswer help_answer(const std::vector<std::string>& words) {
  if (words.empty()) return {exit_ok, usage()};
  if (const CommandSpec* c = find_command(words[0])) return {exit_ok, command_usage(*c)};
  return {exit_usage, "nxdns help: unknown command '" + words[0] + "'\n\n" + usage()};
}

}  // namespace nxdns::cli
