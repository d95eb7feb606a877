#include "cli/args.hpp"

#include <cerrno>
#include <cstdlib>

namespace nxdns::cli {

namespace {
constexpr OptionSpec run_options[] = {{"config", 'c', true, "configuration file (YAML)"},
                                      {"log-level", 'l', true, "override log.level"}};
constexpr OptionSpec check_options[] = {{"config", 'c', true, "configuration file (YAML)"},
                                        {"offline", '\0', false, "validate only; no network"}};
constexpr OptionSpec burst_options[] = {
    {"server", 's', true, "address:port of the DNS server (default 127.0.0.1:53)"},
    {"names", 'n', true, "concurrent unique names (default 30)"},
    {"zone", 'z', true, "zone the random labels go under (default burst.test; nxdns answers test itself unless forward_special_zones lists it)"},
    {"timeout-ms", '\0', true, "per-query timeout (default 6000)"},
    {"gate", '\0', true, "judge by a named acceptance gate (a wrong NAME lists them)"},
    {"report-only", '\0', false, "with --gate: print the gate, enforce only no SERVFAIL / no timeout"},
    {"max-ratio", '\0', true, "fail when wall / single exceeds this (not with --gate)"},
    {"max-stair", '\0', true, "fail when the staircase score exceeds this (not with --gate)"},
    {"cold", '\0', false, "burst first, then the single query (measures a cold burst; cold gates imply it)"},
    {"json", '\0', false, "print one JSON object instead of the timeline"}};
constexpr OptionSpec demo_options[] = {{"rtt-ms", '\0', true, "simulated round trip to the upstream (default 40)"},
                                       {"names", 'n', true, "names per burst (default 30)"}};
constexpr OptionSpec cache_options[] = {
    {"http", '\0', true, "address:port of the daemon's HTTP surface (default: http.listen of --config, else 127.0.0.1:8053)"},
    {"config", 'c', true, "configuration file to read http.listen from"}};
constexpr OptionSpec reload_options[] = {
    {"http", '\0', true, "address:port of the daemon's HTTP surface (default: http.listen of --config, else 127.0.0.1:8053)"},
    {"config", 'c', true, "configuration file to read http.listen from"},
    {"pid", '\0', true, "send SIGHUP to this process instead (no answer: the result is in its log)"}};
constexpr OptionSpec why_options[] = {
    {"type", 't', true, "query type to ask about (default A)"},
    {"client", '\0', true, "the client's IP address (access control; blocking groups)"},
    {"json", '\0', false, "print the daemon's JSON answer"},
    {"http", '\0', true, "address:port of the daemon's HTTP surface (default: http.listen of --config, else 127.0.0.1:8053)"},
    {"config", 'c', true, "configuration file to read http.listen from"}};
constexpr CommandSpec command_table[] = {
    {"run", "serve DNS with the given configuration", run_options},
    {"check", "validate the configuration, then probe each enabled upstream once", check_options},
    {"burst", "send N concurrent unique-name queries to a server and judge the timeline", burst_options},
    {"demo", "run the embedded demo on loopback: fixture upstream, daemon, cold and warm bursts", demo_options},
    {"cache", "cache flush [NAME]: empty the running daemon's cache, or every entry under NAME", cache_options, 2},
    {"reload", "make the running daemon re-read and apply its configuration file; prints what applied or why not",
     reload_options},
    {"why", "why NAME: how the running daemon routes NAME (local record, zone, LAN server or upstream) and why",
     why_options, 1},
    {"version", "print the version and library versions", {}},
    {"help", "show this help", {}},
};
}  // namespace

std::span<const CommandSpec> commands() { return command_table; }

std::string usage() {
  std::string s = "usage: nxdns <command> [options]\n\ncommands:\n";
  for (const auto& c : commands()) {
    s += "  " + std::string(c.name) + std::string(c.name.size() < 9 ? 9 - c.name.size() : 1, ' ') +
         std::string(c.summary) + "\n";
    for (const auto& o : c.options) {
      std::string flag = "      --" + std::string(o.name);
      if (o.short_name) flag += std::string(", -") + o.short_name;
      if (o.takes_value) flag += " VALUE";
      s += flag + std::string(flag.size() < 34 ? 34 - flag.size() : 1, ' ') + std::string(o.help) + "\n";
    }
  }
  return s;
}

ParseResult parse(const std::vector<std::string>& argv) {
  ParseResult r;
  if (argv.empty()) {
    r.error = "missing command";
    return r;
  }
  std::string cmd = argv[0];
  if (cmd == "--help" || cmd == "-h") cmd = "help";
  if (cmd == "--version" || cmd == "-V") cmd = "version";
  const CommandSpec* spec = nullptr;
  for (const auto& c : commands())
    if (c.name == cmd) spec = &c;
  if (!spec) {
    r.error = "unknown command '" + argv[0] + "'";
    return r;
  }
  Parsed p;
  p.command = cmd;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
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
      r.error = "unexpected argument '" + a + "' for '" + cmd + "'";
      return r;
    }
    if (!opt) {
      r.error = "unknown option '" + a + "' for '" + cmd + "'";
      return r;
    }
    if (!opt->takes_value) {
      if (has_inline) {
        r.error = "option '--" + std::string(opt->name) + "' takes no value";
        return r;
      }
      p.values[std::string(opt->name)] = "";
      continue;
    }
    if (has_inline) {
      p.values[std::string(opt->name)] = inline_value;
    } else if (i + 1 < argv.size()) {
      p.values[std::string(opt->name)] = argv[++i];
    } else {
      r.error = "option '" + a + "' needs a value";
      return r;
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
