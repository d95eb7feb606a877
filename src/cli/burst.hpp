#pragma once
// The field repro as a tool: N concurrent unique-name queries at a server,
// each from its own UDP socket as separate household clients would send
// them, with a per-query timeline and a verdict.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "net/endpoint.hpp"

namespace nxdns::cli {

struct BurstOptions {
  net::Endpoint server;
  int names = 30;
  std::string zone = "burst.test";
  int timeout_ms = 6000;
  bool cold = false;  // burst before the single query
};

struct QueryTiming {
  int index = 0;
  double sent_ms = 0;      // relative to the burst start
  double done_ms = -1;     // -1: timed out
  int rcode = -1;          // -1: no answer
};

struct BurstReport {
  double single_ms = 0;    // a warm query on its own (median of three sequential ones)
  int single_rcode = -1;
  std::vector<QueryTiming> queries;
  double wall_ms = 0;      // burst start to last answer (or timeout)
  double p50_ms = 0, max_ms = 0;
  double ratio = 0;        // wall / single
  double staircase = 0;    // see staircase_score
  int servfail = 0, timeouts = 0, other_errors = 0;
};

// Least-squares slope of sorted completion times against rank, divided by
// the single-query latency: ~1 when queries finish one single-latency apart
// (a serial staircase), ~0 when they finish together.
double staircase_score(std::vector<double> completion_ms, double single_ms);
double percentile(std::vector<double> v, double q);

// Runs the burst. Returns nullopt and sets `error` when sockets fail.
std::optional<BurstReport> run_burst(const BurstOptions& o, std::string* error);

std::string render_timeline(const BurstReport& r, int width = 50);
std::string render_summary(const BurstReport& r);
std::string render_json(const BurstReport& r);

struct Verdict {
  bool pass = true;
  std::vector<std::string> reasons;
};
Verdict judge(const BurstReport& r, std::optional<double> max_ratio, std::optional<double> max_stair);

}  // namespace nxdns::cli
