#include <cstdio>
#include <cstdlib>

#include "cli/burst.hpp"
#include "cli/burst_gates.hpp"
#include "cli/commands.hpp"
#include "upstream/tls_config.hpp"

namespace nxdns::cli {

namespace {

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
  // A cold gate's limit depends on the TLS library's round trips; the
  // daemon under test is this same build (its library is ours).
  const bool tls13 = upstream::tls13_available();
  std::optional<BurstCriteria> criteria;
  if (error.empty()) criteria = burst_criteria(p, tls13, &error);
  if (!error.empty()) {
    std::fprintf(stderr, "nxdns burst: %s\n", error.c_str());
    return exit_usage;
  }
  o.names = static_cast<int>(*names);
  o.timeout_ms = static_cast<int>(*timeout);
  o.zone = p.get("zone", "burst.test");
  o.cold = criteria->cold;
  auto r = run_burst(o, &error);
  if (!r) {
    std::fprintf(stderr, "nxdns burst: %s\n", error.c_str());
    return exit_failure;
  }
  const Verdict v = judge(*r, criteria->max_ratio, criteria->max_stair);
  if (p.has("json")) {
    std::printf("%s\n", render_json(*r).c_str());
  } else {
    std::printf("burst of %d %s names at %s\n%s%s", o.names, o.cold ? "cold" : "warm", o.server.to_string().c_str(),
                render_timeline(*r).c_str(), render_summary(*r).c_str());
    if (const BurstGate* g = criteria->gate) {
      std::printf("  gate %.*s%s%s:\n    %s\n    %s\n", static_cast<int>(g->name.size()), g->name.data(),
                  g->cold && !tls13 ? " (TLS 1.2-only library: cold limits one round trip higher)" : "",
                  criteria->report_only ? " (report only: ratio and staircase not enforced)" : "",
                  describe_ratio(*g, tls13, r->ratio).c_str(), describe_staircase(*g, tls13, r->staircase).c_str());
    }
    std::printf("  verdict: %s", v.pass ? "PASS" : "FAIL");
    for (const auto& s : v.reasons) std::printf(" [%s]", s.c_str());
    std::printf("\n");
  }
  return v.pass ? exit_ok : exit_failure;
}

constexpr OptionSpec burst_options[] = {
    {"server", 's', "ADDR:PORT", "the DNS server (default 127.0.0.1:53)"},
    {"names", 'n', "N", "concurrent unique names (default 30)"},
    {"zone", 'z', "ZONE",
     "zone the random labels go under (default burst.test; nxdns answers test itself unless forward_special_zones "
     "lists it)"},
    {"timeout-ms", '\0', "MS", "per-query timeout (default 6000)"},
    {"gate", '\0', "NAME", "judge by a named acceptance gate (a wrong NAME lists them)"},
    {"report-only", '\0', "", "with --gate: print the gate, enforce only no SERVFAIL / no timeout"},
    {"max-ratio", '\0', "X", "fail when wall / single exceeds this (not with --gate)"},
    {"max-stair", '\0', "X", "fail when the staircase score exceeds this (not with --gate)"},
    {"cold", '\0', "", "burst first, then the single query (measures a cold burst; cold gates imply it)"},
    {"json", '\0', "", "print one JSON object instead of the timeline"}};
}  // namespace

constinit const CommandSpec burst_spec{
    "burst",
    "send N concurrent unique-name queries to a server and judge the timeline",
    "nxdns burst [--server ADDR:PORT] [--names N] [--gate NAME [--report-only] | --max-ratio X --max-stair X] "
    "[options]",
    burst_options,
    "nxdns burst --server 192.0.2.53:53 --names 30\n"
    "nxdns burst --server 127.0.0.1:5300 --gate warm",
    0,
    burst_command};

}  // namespace nxdns::cli
