#include "cli/burst_gates.hpp"

#include <cstdio>
#include <cstdlib>

namespace nxdns::cli {

namespace {

// One row per gate; adding a gate is adding a row. The workload is the
// acceptance scenario: one DoT upstream behind a 40 ms simulated round trip
// (nxdns-delay-relay, which also delays each new connection by one round
// trip), 30 concurrent unique names; a "serial" upstream answers a
// connection's queries one at a time, 10 ms each (nxdns-fixture-dot
// --serial --response-delay-ms 10). A median is that of calm
// burst_acceptance.sh runs per TLS library (how they were measured:
// docs/performance.md, "Acceptance gates"). A margin covers the upper
// quartile of those runs where it can, and stays at or below half a round
// trip (ratio 0.5): one more round trip fails every gate. Staircase limits:
// quiet bursts score <= 0.05; four waves of eight score 0.12, one session's
// serial line (five waves of six) 0.16, the field defect 1.0. The last
// column says which rule a row's staircase limit follows; a row that leaves
// it out is below four waves of eight (StaircaseRule).
constexpr BurstGate gate_table[] = {
    //  name        cold  dials  median 1.3  median 1.2  margin  stair  design  [stair rule]
    // TCP + TLS + query: 3 round trips (4 with TLS 1.2) plus the parallel
    // handshakes' CPU on each end, which is what load moves; the first
    // session up carries the burst (the hedge). Without the hedge the
    // medians are 4.12 / 6.26, which these gates fail. Design: ~3.2 (the
    // best established forwarders, over one session).
    {"cold", true, true, 3.40, 4.55, 0.50, 0.10, 3.2},
    // One pipelined round trip. Design: ~1.06.
    {"warm", false, false, 1.07, 1.07, 0.12, 0.05, 1.06},
    // The cold floor plus each session's line (30 names over 5 sessions x
    // 10 ms).
    {"serial-cold", true, true, 4.65, 5.74, 0.50, 0.11, 0},
    // Spread over the open sessions (without: (40 + 30 x 10) / 50 = 6.8, a
    // staircase).
    {"serial-warm", false, false, 2.20, 2.19, 0.50, 0.11, 0},
    // The household's usual state: a fresh daemon holding one session (the
    // burst tool's single queries open it), then the burst, pipelined on
    // that session: one round trip, like warm. The margin is wider than
    // warm's: with no pipelining verdict yet the burst also dials headroom
    // sessions (dot_placement.hpp), whose handshakes' CPU competes with the
    // burst on a 2-core machine. 0.25 is a quarter round trip: waiting for
    // any handshake still fails it (>= 2). Design: ~1.06 (the peers
    // pipeline on their one connection).
    {"one-session", false, false, 1.08, 1.06, 0.25, 0.05, 1.06},
    // The same state against a one-at-a-time upstream: the line on the open
    // session is detected, re-sent once and spread over sessions dialled as
    // headroom, so the burst pays a dial plus the spread line; a cold-like
    // burst, whose dials' CPU is what load moves. Its staircase limit is
    // 0.20, not 0.11: the open session still answers its line one at a time
    // while the re-sent copies come back from the new sessions, hence its
    // rule: what tells spreading from a serial line here is the fixture's
    // counters in burst_acceptance.sh (connections, duplicates received)
    // and the ratio.
    {"serial-one-session", false, true, 4.15, 5.00, 0.50, 0.20, 0, StaircaseRule::judged_by_fixture_counters},
    // A warm burst through one DoH upstream over HTTP/2 (tests/integration/
    // doh.sh part 2: nghttpx terminating TLS and HTTP/2 in front of
    // nxdns-fixture-doh, the relay's 40 ms; a warm-up burst first): one
    // multiplexed round trip. TLS is curl's (OpenSSL), so both columns are
    // the same figure. The margin keeps the gate above the upper quartile
    // of runs on a loaded machine.
    {"doh-warm", false, false, 1.28, 1.28, 0.22, 0.10, 0},
};

}  // namespace

std::span<const BurstGate> burst_gates() { return gate_table; }

const BurstGate* find_burst_gate(std::string_view name) {
  for (const auto& g : gate_table)
    if (g.name == name) return &g;
  return nullptr;
}

std::string burst_gate_names() {
  std::string s;
  for (const auto& g : gate_table) s += (s.empty() ? "" : ", ") + std::string(g.name);
  return s;
}

GateLimits gate_limits(const BurstGate& g, bool tls13) {
  const double median = tls13 ? g.measured_ratio_tls13 : g.measured_ratio_tls12;
  return GateLimits{median + g.ratio_margin, g.max_staircase, median, g.design_target};
}

namespace {
std::optional<double> positive_number(const Parsed& p, const std::string& name, std::string* error) {
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

std::optional<BurstCriteria> burst_criteria(const Parsed& p, bool tls13, std::string* error) {
  BurstCriteria c;
  c.cold = p.has("cold");
  c.report_only = p.has("report-only");
  c.max_ratio = positive_number(p, "max-ratio", error);
  c.max_stair = positive_number(p, "max-stair", error);
  if (!error->empty()) return std::nullopt;
  if (!p.has("gate")) {
    if (c.report_only) {
      *error = "option '--report-only' needs '--gate NAME' (the gate it reports against)";
      return std::nullopt;
    }
    return c;
  }
  c.gate = find_burst_gate(p.get("gate"));
  if (!c.gate) {
    *error = "option '--gate' wants one of " + burst_gate_names() + ", got '" + p.get("gate") + "'";
    return std::nullopt;
  }
  // One definition of each threshold: a gate's limits are not overridden
  // from the command line.
  if (c.max_ratio || c.max_stair) {
    *error = "option '--gate' sets the limits; drop '--max-ratio' / '--max-stair'";
    return std::nullopt;
  }
  if (c.cold && !c.gate->cold) {
    *error = "option '--cold' contradicts '--gate " + std::string(c.gate->name) + "' (a warm gate)";
    return std::nullopt;
  }
  c.cold = c.gate->cold;
  if (!c.report_only) {
    const GateLimits l = gate_limits(*c.gate, tls13);
    c.max_ratio = l.max_ratio;
    c.max_stair = l.max_staircase;
  }
  return c;
}

std::string describe_ratio(const BurstGate& g, bool tls13, double ratio) {
  const GateLimits l = gate_limits(g, tls13);
  char buf[200];
  char target[64] = "design target: no staircase";
  if (l.design_target > 0)
    std::snprintf(target, sizeof target, "design target %.2f%s", l.design_target, tls13 ? "" : " with TLS 1.3");
  std::snprintf(buf, sizeof buf, "ratio %.2f (gate <= %.2f: measured %.2f median + margin; %s)", ratio, l.max_ratio,
                l.measured_ratio, target);
  return buf;
}

std::string describe_staircase(const BurstGate& g, bool tls13, double staircase) {
  char buf[120];
  std::snprintf(buf, sizeof buf, "staircase %.2f (gate <= %.2f; 0 = all at once, 1 = one after another)", staircase,
                gate_limits(g, tls13).max_staircase);
  return buf;
}

}  // namespace nxdns::cli
