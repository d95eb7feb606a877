#pragma once
// Command-line parsing for `nxdns <command> [options]`. Each command declares
// its options; anything else is a usage error naming the option.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nxdns::cli {

// The command table is static data (no heap): it is read by every parse.
struct OptionSpec {
  std::string_view name;   // long name without dashes, e.g. "config"
  char short_name = '\0';  // e.g. 'c'
  bool takes_value = true;
  std::string_view help;
};

struct CommandSpec {
  std::string_view name;
  std::string_view summary;
  std::span<const OptionSpec> options;
  // Words after the command that are not options (`nxdns cache flush NAME`).
  std::size_t max_positionals = 0;
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
};

std::span<const CommandSpec> commands();
ParseResult parse(const std::vector<std::string>& argv);
std::string usage();
// Integer option within [lo, hi]; error names the option.
std::optional<long> int_option(const Parsed& p, const std::string& name, long def, long lo, long hi, std::string* error);

}  // namespace nxdns::cli
