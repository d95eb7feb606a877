#include "cli/args.hpp"

#include <cerrno>
#include <cstdlib>

#include "cli/commands.hpp"

namespace nxdns::cli {

namespace {
const CommandSpec* const command_table[] = {&run_spec,   &check_spec, &burst_spec,   &demo_spec, &cache_spec,
                                            &reload_spec, &why_spec,  &version_spec, &help_spec};

std::string see_help(std::string_view cmd) { return "; see 'nxdns " + std::string(cmd) + " --help'"; }

bool asks_for_help(const std::string& a) { return a == "--help" || a == "-h"; }
}  // namespace

std::span<const CommandSpec* const> commands() { return command_table; }

const CommandSpec* find_command(std::string_view name) {
  for (const CommandSpec* c : commands())
    if (c->name == name) return c;
  return nullptr;
}

ParseResult parse(const std::vector<std::string>& argv) {
  ParseResult r;
  if (argv.empty()) {
    r.error = "missing command";
    return r;
  }
  std::string cmd = argv[0];
  if (asks_for_help(cmd)) cmd = "help";
  if (cmd == "--version" || cmd == "-V") cmd = "version";
  const CommandSpec* spec = find_command(cmd);
  if (!spec) {
    r.error = "unknown command '" + argv[0] + "'";
    return r;
  }
  auto fail = [&](std::string why) {
    r.error = std::move(why) + see_help(cmd);
    r.command = spec;
    return r;
  };
  Parsed p;
  p.command = cmd;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (asks_for_help(a)) {
      // Every command takes it, whatever else is on the line: the answer is
      // that command's own help.
      Parsed h;
      h.command = "help";
      h.positionals.push_back(cmd);
      r.parsed = std::move(h);
      return r;
    }
    const OptionSpec* opt = nullptr;
    std::string inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      std::string name = a.substr(2);
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_inline = true;
      }
      for (const auto& o : spec->options)
        if (o.name == name) opt = &o;
    } else if (a.size() == 2 && a[0] == '-') {
      for (const auto& o : spec->options)
        if (o.short_name == a[1]) opt = &o;
    } else if (p.positionals.size() < spec->max_positionals) {
      p.positionals.push_back(a);
      continue;
    } else {
      return fail("unexpected argument '" + a + "' for '" + cmd + "'");
    }
    if (!opt) return fail("unknown option '" + a + "' for '" + cmd + "'");
    if (!opt->takes_value()) {
      if (has_inline) return fail("option '--" + std::string(opt->name) + "' takes no value");
      p.values[std::string(opt->name)] = "";
      continue;
    }
    if (has_inline) {
      p.values[std::string(opt->name)] = inline_value;
    } else if (i + 1 < argv.size()) {
      p.values[std::string(opt->name)] = argv[++i];
    } else {
      return fail("option '" + a + "' needs a value");
    }
  }
  r.parsed = std::move(p);
  return r;
}

std::optional<long> int_option(const Parsed& p, const std::string& name, long def, long lo, long hi, std::string* error) {
  if (!p.has(name)) return def;
  const std::string v = p.get(name);
  errno = 0;
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < lo || n > hi) {
    *error = "option '--" + name + "' wants a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
             ", got '" + v + "'";
    return std::nullopt;
  }
  return n;
}

}  // namespace nxdns::cli
