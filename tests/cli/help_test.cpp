// `nxdns COMMAND --help`, `nxdns help COMMAND` and the usage errors that
// point to them: each command's help is its own table, and only its own.
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/help.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::cli;

namespace {

// "--NAME" as the help prints an option: followed by a space (its value or
// the help column) or a newline.
bool shows_option(const std::string& text, std::string_view name) {
  const std::string flag = "--" + std::string(name);
  for (auto at = text.find(flag); at != std::string::npos; at = text.find(flag, at + 1)) {
    const char next = at + flag.size() < text.size() ? text[at + flag.size()] : '\n';
    if (next == ' ' || next == '\n') return true;
  }
  return false;
}

bool own_option(const CommandSpec& c, std::string_view name) {
  for (const OptionSpec& o : c.options)
    if (o.name == name) return true;
  return false;
}

}  // namespace

TEST_GROUP(Help){};

TEST(Help, EveryCommandTakesDashDashHelpAndDashH) {
  for (const CommandSpec* c : commands()) {
    const std::string name(c->name);
    for (const char* flag : {"--help", "-h"}) {
      const auto r = parse({name, flag});
      CHECK_TEXT(r.parsed.has_value(), (name + " " + flag + ": " + r.error).c_str());
      STRCMP_EQUAL("help", r.parsed->command.c_str());
      CHECK_EQUAL(1U, r.parsed->positionals.size());
      STRCMP_EQUAL(name.c_str(), r.parsed->positionals[0].c_str());
    }
  }
  // After other options too, and before a value the command would reject.
  STRCMP_EQUAL("help", parse({"run", "-c", "x.yaml", "--help"}).parsed->command.c_str());
  STRCMP_EQUAL("help", parse({"why", "-h", "a", "b", "c"}).parsed->command.c_str());
  // An option's value is not a request for help.
  STRCMP_EQUAL("-h", parse({"burst", "--zone", "-h"}).parsed->get("zone").c_str());
}

TEST(Help, CommandHelpShowsItsSynopsisItsOptionsAndAnExample) {
  for (const CommandSpec* c : commands()) {
    const std::string name(c->name);
    const HelpAnswer a = help_answer({name});
    CHECK_EQUAL(exit_ok, a.exit_code);
    const std::string synopsis = "usage: " + std::string(c->synopsis) + "\n";
    CHECK_TEXT(a.text.rfind(synopsis, 0) == 0, a.text.c_str());
    STRCMP_CONTAINS(("nxdns " + name).c_str(), synopsis.c_str());
    STRCMP_CONTAINS(std::string(c->summary).c_str(), a.text.c_str());
    CHECK_TEXT(!c->example.empty(), name.c_str());
    STRCMP_CONTAINS(("\nexample:\n  nxdns " + name).c_str(), a.text.c_str());
    STRCMP_CONTAINS("-h, --help", a.text.c_str());
    for (const OptionSpec& o : c->options) {
      CHECK_TEXT(shows_option(a.text, o.name), (name + " --help lacks --" + std::string(o.name)).c_str());
      STRCMP_CONTAINS(std::string(o.help).c_str(), a.text.c_str());
    }
    for (const CommandSpec* other : commands()) {
      for (const OptionSpec& o : other->options) {
        if (own_option(*c, o.name)) continue;
        CHECK_TEXT(!shows_option(a.text, o.name),
                   (name + " --help shows " + std::string(other->name) + "'s --" + std::string(o.name)).c_str());
      }
    }
  }
}

TEST(Help, ValuesAreNamedInTheOptionLine) {
  const std::string burst = command_usage(*find_command("burst"));
  STRCMP_CONTAINS("  -s, --server ADDR:PORT ", burst.c_str());
  STRCMP_CONTAINS("      --report-only ", burst.c_str());
  const std::string run = command_usage(*find_command("run"));
  STRCMP_CONTAINS("  -c, --config FILE ", run.c_str());
}

TEST(Help, HelpCommandPrintsTheSameAsDashDashHelp) {
  for (const CommandSpec* c : commands()) {
    const auto r = parse({"help", std::string(c->name)});
    CHECK_TRUE(r.parsed.has_value());
    STRCMP_EQUAL(command_usage(*c).c_str(), help_answer(r.parsed->positionals).text.c_str());
    STRCMP_EQUAL(help_answer(parse({std::string(c->name), "--help"}).parsed->positionals).text.c_str(),
                 help_answer(r.parsed->positionals).text.c_str());
  }
  // --help and -h in front of a command name ask the help command too.
  STRCMP_EQUAL(command_usage(*find_command("why")).c_str(),
               help_answer(parse({"-h", "why"}).parsed->positionals).text.c_str());
  CHECK_TRUE(parse({"help", "run", "extra"}).error.find("unexpected argument 'extra'") != std::string::npos);
}

TEST(Help, HelpRunsTheHelpCommand) {
  for (const CommandSpec* c : commands()) {
    const auto r = parse({std::string(c->name), "--help"});
    const CommandSpec* runs = find_command(r.parsed->command);
    CHECK_TRUE(runs == &help_spec);
    CHECK_TRUE(c->run != nullptr);
  }
}

TEST(Help, UnknownCommandToHelpIsAUsageError) {
  const HelpAnswer a = help_answer({"serve"});
  CHECK_EQUAL(exit_usage, a.exit_code);
  STRCMP_CONTAINS("unknown command 'serve'", a.text.c_str());
  STRCMP_CONTAINS("commands:", a.text.c_str());
}

TEST(Help, GlobalHelpListsCommandsAndLeavesOptionsToEachCommand) {
  const HelpAnswer a = help_answer({});
  CHECK_EQUAL(exit_ok, a.exit_code);
  STRCMP_EQUAL(usage().c_str(), a.text.c_str());
  for (const CommandSpec* c : commands()) {
    STRCMP_CONTAINS(("  " + std::string(c->name) + " ").c_str(), a.text.c_str());
    STRCMP_CONTAINS(std::string(c->summary).c_str(), a.text.c_str());
    for (const OptionSpec& o : c->options) CHECK_FALSE(shows_option(a.text, o.name));
  }
  STRCMP_CONTAINS("nxdns <command> --help", a.text.c_str());
}

TEST(Help, UnknownOptionNamesItAndTheCommandAndPointsToItsHelp) {
  const auto r = parse({"why", "example.com", "--bogus"});
  CHECK_FALSE(r.parsed.has_value());
  STRCMP_CONTAINS("unknown option '--bogus' for 'why'", r.error.c_str());
  STRCMP_CONTAINS("'nxdns why --help'", r.error.c_str());
  CHECK_TRUE(r.command == &why_spec);
  const auto s = parse({"burst", "-q"});
  STRCMP_CONTAINS("unknown option '-q' for 'burst'", s.error.c_str());
  STRCMP_CONTAINS("'nxdns burst --help'", s.error.c_str());
  // The other usage errors of a known command point there too.
  STRCMP_CONTAINS("'nxdns run --help'", parse({"run", "-c"}).error.c_str());
  STRCMP_CONTAINS("'nxdns check --help'", parse({"check", "--offline=yes"}).error.c_str());
  // An unknown command has no help of its own to point to.
  const auto u = parse({"serve", "--help"});
  CHECK_FALSE(u.parsed.has_value());
  CHECK_TRUE(u.command == nullptr);
}

TEST(Help, NoCommandTakesHelpsLettersForItself) {
  for (const CommandSpec* c : commands()) {
    for (const OptionSpec& o : c->options) {
      CHECK_TEXT(o.short_name != 'h' && o.name != "help", std::string(c->name).c_str());
      CHECK_TEXT(!o.help.empty() && o.help.find('\n') == std::string_view::npos, std::string(o.name).c_str());
    }
  }
}
