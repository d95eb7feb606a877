#include <cstdio>
#include <cstdlib>

#include "cli/burst.hpp"
#include "cli/commands.hpp"

namespace nxdns::cli {

namespace {
std::optional<double> double_option(const Parsed& p, const std::string& name, std::string* error) {
  if (!p.has(name)) return std::nullopt;
  const std::string v = p.get(name);
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(d > 0)) {
    *error = "option '--" + name + "' wants a positive number, got '" + v + "'";
    return std::nullopt;
  }
  return d;
}
}  // namespace

int burst_command(const Parsed& p) {
  BurstOptions o;
  std::string error;
  std::string why;
  auto ep = net::parse_endpoint(p.get("server", "127.0.0.1:53"), 53, &why);
  if (!ep) {
    std::fprintf(stderr, "nxdns burst: --server: %s\n", why.c_str());
    return exit_usage;
  }
  o.server = *ep;
  auto names = int_option(p, "names", 30, 1, 1000, &error);
  auto timeout = int_option(p, "timeout-ms", 6000, 100, 120000, &error);
  auto max_ratio = double_option(p, "max-ratio", &error);
  auto max_stair = double_option(p, "max-stair", &error);
  if (!error.empty()) {
    std::fprintf(stderr, "nxdns burst: %s\n", error.c_str());
    return exit_usage;
  }
  o.names = static_cast<int>(*names);
  o.timeout_ms = static_cast<int>(*timeout);
  o.zone = p.get("zone", "burst.test");
  o.cold = p.has("cold");
  auto r = run_burst(o, &error);
  if (!r) {
    std::fprintf(stderr, "nxdns burst: %s\n", error.c_str());
    return exit_failure;
  }
  const Verdict v = judge(*r, max_ratio, max_stair);
  if (p.has("json")) {
    std::printf("%s\n", render_json(*r).c_str());
  } else {
    std::printf("burst of %d %s names at %s\n%s%s", o.names, o.cold ? "cold" : "warm", o.server.to_string().c_str(),
                render_timeline(*r).c_str(), render_summary(*r).c_str());
    std::printf("  verdict: %s", v.pass ? "PASS" : "FAIL");
    for (const auto& s : v.reasons) std::printf(" [%s]", s.c_str());
    std::printf("\n");
  }
  return v.pass ? exit_ok : exit_failure;
}

}  // namespace nxdns::cli
