#pragma once
// Command-line parsing for `nxdns <command> [options]`. Each command declares
// its options, synopsis and example in its own table (CommandSpec, beside the
// code that reads them); anything else is a usage error naming the option.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nxdns::cli {

struct Parsed;

// The command tables are static data (no heap): they are read by every parse.
struct OptionSpec {
  std::string_view name;   // long name without dashes, e.g. "config"
  char short_name = '\0';  // e.g. 'c'
  std::string_view value;  // what the value is, e.g. "FILE"; empty: a flag
  std::string_view help;   // one line
  bool takes_value() const { return !value.empty(); }
};

struct CommandSpec {
  std::string_view name;
  std::string_view summary;   // one line, for the list of commands
  std::string_view synopsis;  // "nxdns cache flush [NAME] [--http ADDR:PORT | --config FILE]"
  std::span<const OptionSpec> options;
  std::string_view example;  // one command line per line
  // Words after the command that are not options (`nxdns cache flush NAME`).
  std::size_t max_positionals = 0;
  int (*run)(const Parsed&) = nullptr;
};

struct Parsed {
  std::string command;
  std::map<std::string, std::string> values;  // flags map to "" when given
  std::vector<std::string> positionals;
  bool has(const std::string& k) const { return values.count(k) != 0; }
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = values.find(k);
    return it == values.end() ? def : it->second;
  }
};

struct ParseResult {
  std::optional<Parsed> parsed;
  std::string error;  // usage error when !parsed
  // The command the error is about, when the command itself was known: the
  // error then points to its own help rather than to the list of commands.
  const CommandSpec* command = nullptr;
};

// In the order `nxdns help` lists them.
std::span<const CommandSpec* const> commands();
const CommandSpec* find_command(std::string_view name);
// `nxdns COMMAND --help` (or -h) parses as `nxdns help COMMAND`.
ParseResult parse(const std::vector<std::string>& argv);
// Integer option within [lo, hi]; error names the option.
std::optional<long> int_option(const Parsed& p, const std::string& name, long def, long lo, long hi, std::string* error);

}  // namespace nxdns::cli
