#pragma once
// The burst acceptance gates: the one definition of "how fast is fast
// enough" that `nxdns burst --gate NAME`, `nxdns demo`, the hermetic
// acceptance test (tests/integration/burst_acceptance.sh) and the NixOS VM
// test read. Each gate sits just above what this project measured, with the
// margin explained beside it; the design target (what established forwarders
// reach on the same workload, docs/performance.md) is printed next to every
// verdict. Adding a gate is one row in burst_gates.cpp.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cli/args.hpp"

namespace nxdns::cli {

// What a gate's staircase limit is derived from: the rule a reader (and
// tests/cli/burst_test.cpp) checks the limit against.
enum class StaircaseRule {
  // Below four waves of eight (score 0.12): a burst that got 8-way
  // concurrency and no more fails the gate on its shape alone.
  below_eight_way_waves,
  // At or above four waves: the burst's own shape has a tail that long (the
  // open session answers its line one at a time while re-sent copies come
  // back from sessions dialled meanwhile), so the limit only stops the field
  // defect, and what tells spreading from a serial line is the fixture's
  // counters (connections, duplicates received) and the ratio, checked by
  // the test that runs the gate.
  judged_by_fixture_counters,
};

struct BurstGate {
  std::string_view name;        // what `--gate` takes
  bool cold;                    // the burst runs before any upstream session exists
  // The burst waits for sessions dialled during it (every cold burst; a
  // serial upstream's spread): those gates differ by the TLS 1.2 round trip.
  bool dials;
  double measured_ratio_tls13;  // median burst wall / one warm query, mbedTLS 3.6
  double measured_ratio_tls12;  // the same on a TLS 1.2-only library (mbedTLS 2.28)
  double ratio_margin;          // the gate is the measured median + this
  double max_staircase;         // staircase_score (0: all at once, 1: serial)
  double design_target;         // the ratio established forwarders reach (TLS 1.3); 0: none stated
  // Last, with the common rule as its default, so a row that leaves it out
  // states nothing unusual.
  StaircaseRule staircase_rule = StaircaseRule::below_eight_way_waves;
};

// A cold session costs TCP + TLS + query round trips: 3 with TLS 1.3 and 4
// with TLS 1.2 (mbedTLS 2.28 has no TLS 1.3 and no False Start), so a cold
// gate's ratio sits at least one round trip (1.0) higher on a TLS 1.2-only
// library, more with 2.28's slower handshake arithmetic on both ends (so does
// any gate whose burst dials sessions): each
// row carries the median measured on both, and gate_limits picks the one
// for the library this build uses. Warm bursts open no session; their two
// figures agree.

// The workload every gate was measured on: ratios mean nothing elsewhere
// (at 0 ms a ratio divides by a sub-millisecond query).
inline constexpr int gate_rtt_ms = 40;
inline constexpr int gate_names = 30;

std::span<const BurstGate> burst_gates();
const BurstGate* find_burst_gate(std::string_view name);
// "cold, warm, serial-cold, serial-warm": for usage and error messages.
std::string burst_gate_names();

// What a verdict enforces for one gate on this TLS library.
struct GateLimits {
  double max_ratio;       // measured median (this library) + margin
  double max_staircase;
  double measured_ratio;  // this library's median
  double design_target;   // TLS 1.3; 0: none stated
};
GateLimits gate_limits(const BurstGate& g, bool tls13);

// How `nxdns burst` judges a run, from its options: either a named gate
// (`--gate NAME`, optionally `--report-only`) or explicit limits
// (`--max-ratio`, `--max-stair`), never both.
struct BurstCriteria {
  const BurstGate* gate = nullptr;  // nullptr: explicit limits (or none)
  std::optional<double> max_ratio, max_stair;  // what the verdict enforces
  bool report_only = false;  // print the gate, enforce only no SERVFAIL / no timeout
  bool cold = false;         // the gate (or --cold) asks for a cold burst
};
std::optional<BurstCriteria> burst_criteria(const Parsed& p, bool tls13, std::string* error);

// The line printed beside a verdict, e.g.
// "ratio 1.04 (gate <= 1.15: measured 1.04 median + margin; design target 1.06)".
std::string describe_ratio(const BurstGate& g, bool tls13, double ratio);
std::string describe_staircase(const BurstGate& g, bool tls13, double staircase);

}  // namespace nxdns::cli
