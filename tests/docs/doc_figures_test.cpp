// The figures the documentation states for compiled limits and defaults
// (docs/, and the defaults the example configuration and the NixOS module
// write out), checked against the constants that decide them. A constant
// changed without its docs, or a doc edited to a figure the code does not
// have, fails here, naming the file and the sentence.
//
// Each check is a sentence of a file with {} where a figure stands
// (whitespace, line breaks included, counts as one space). Every place the
// sentence occurs must carry the constants' figures, and it must occur at
// least once: a reworded sentence fails too, so the check is moved with it.
#include <chrono>
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cache/caching_pool.hpp"
#include "dns/message.hpp"
#include "log/log.hpp"
#include "log/repeat_limiter.hpp"
#include "server/limits.hpp"
#include "upstream/budgets.hpp"
#include "upstream/transport.hpp"

#include <CppUTest/TestHarness.h>

#ifndef NXDNS_SOURCE_DIR
#error "NXDNS_SOURCE_DIR must name the source tree"
#endif

namespace {

std::string collapse_whitespace(const std::string& in) {
  std::string out;
  bool space = false;
  for (char c : in) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string read_doc(const std::string& name) {
  const std::string path = std::string(NXDNS_SOURCE_DIR) + "/" + name;
  std::ifstream f(path);
  if (!f) FAIL(("cannot read " + path).c_str());
  std::ostringstream s;
  s << f.rdbuf();
  return collapse_whitespace(s.str());
}

std::string regex_escape(const std::string& s) {
  constexpr std::string_view special = "\\^$.|?*+()[]{}/-";
  std::string out;
  for (char c : s) {
    if (special.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// A figure as docs write it: digits, thousands separated by commas ("65,535").
constexpr std::string_view figure = "([0-9]+(?:,[0-9]{3})*)";

std::string without_commas(std::string s) {
  std::erase(s, ',');
  return s;
}

struct Sentence {
  const char* file;      // in the source tree
  std::string text;      // with {} for each figure
  std::vector<std::uint64_t> figures;
};

void check(const Sentence& s) {
  const std::string text = collapse_whitespace(s.text);
  std::string pattern;
  std::size_t holes = 0;
  std::size_t from = 0;
  for (std::size_t at; (at = text.find("{}", from)) != std::string::npos; from = at + 2, ++holes) {
    pattern += regex_escape(text.substr(from, at - from));
    pattern += figure;
  }
  pattern += regex_escape(text.substr(from));
  if (holes != s.figures.size()) FAIL(("the check itself is wrong: " + s.text).c_str());

  const std::string doc = read_doc(s.file);
  const std::regex re(pattern);
  std::size_t found = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), re); it != std::sregex_iterator(); ++it) {
    ++found;
    for (std::size_t i = 0; i < holes; ++i) {
      const std::string stated = without_commas((*it)[i + 1].str());
      const std::string wanted = std::to_string(s.figures[i]);
      if (stated != wanted) {
        FAIL(nxdns::log::cat(s.file, " says \"", it->str(), "\": figure ", i + 1, " is ", stated,
                             ", the code has ", wanted)
                 .c_str());
      }
    }
  }
  if (found == 0) {
    FAIL(nxdns::log::cat(s.file, " no longer says \"", s.text,
                         "\": update the sentence here along with the doc")
             .c_str());
  }
}

template <class Rep, class Period>
std::uint64_t ms(std::chrono::duration<Rep, Period> d) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}
template <class Rep, class Period>
std::uint64_t whole_seconds(std::chrono::duration<Rep, Period> d) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
  // A figure stated in whole seconds must be one.
  if (std::chrono::duration_cast<std::chrono::milliseconds>(s) != d) FAIL("not a whole number of seconds");
  return static_cast<std::uint64_t>(s.count());
}

}  // namespace

using namespace nxdns;

TEST_GROUP(DocFigures){};

TEST(DocFigures, ListenerCaps) {
  const std::uint64_t udp = server::udp_in_flight_cap, tcp = server::tcp_connection_cap;
  const std::uint64_t refused = server::tcp_refused_budget;
  for (const Sentence& s : std::vector<Sentence>{
           {"docs/reference/config.md", "**UDP queries in flight: {} per address family**", {udp}},
           {"docs/reference/config.md",
            "**TCP connections: {} per address family** (each client at most {}, clients outside "
            "`access_control` at most {} together",
            {tcp, server::tcp_client_share, refused}},
           {"docs/reference/metrics.md", "UDP queries being worked on. Cap: {} per family;", {udp}},
           {"docs/reference/metrics.md",
            "Open client TCP connections. Cap: {} per family, of which clients outside `access_control` may hold {}.",
            {tcp, refused}},
           {"docs/reference/metrics.md", "| `udp_in_flight_cap` | {} UDP queries of that family", {udp}},
           {"docs/reference/metrics.md", "| `tcp_connection_cap` | {} TCP connections of that family", {tcp}},
           {"docs/reference/metrics.md", "while refused clients already held {} TCP connections", {refused}},
           {"docs/reference/api.md", "\"udp_in_flight_cap\": {}, \"tcp_connections\"", {udp}},
           {"docs/reference/api.md", "\"tcp_connection_cap\": {}, \"replies\"", {tcp}},
           {"docs/architecture.md", "Over a cap ({} UDP queries in flight, {} TCP connections", {udp, tcp}},
           {"docs/architecture.md", "its share (1/{} of the UDP cap, 1/{} of the TCP cap)",
            {udp / server::udp_client_share, tcp / server::tcp_client_share}},
           {"docs/architecture.md",
            "| UDP in flight / TCP connections per family | {} / {} (per client {} / {}; refused clients together {} TCP) |",
            {udp, tcp, server::udp_client_share, server::tcp_client_share, refused}},
       }) {
    check(s);
  }
}

TEST(DocFigures, UpstreamConcurrency) {
  const std::uint64_t cap = upstream::max_in_flight_per_entry, slots = upstream::slots_per_entry;
  for (const Sentence& s : std::vector<Sentence>{
           {"docs/reference/metrics.md", "each upstream has {} *slots* (DoT: up to {} TLS sessions; DoH: up to {} connections) "
                                    "and admits up to {} exchanges in flight",
            {slots, slots, slots, cap}},
           {"docs/reference/metrics.md", "Callers beyond {} — or beyond", {cap}},
           {"docs/reference/metrics.md", "| `nxdns_upstream_max_in_flight` | gauge | | The compiled cap, {}. |", {cap}},
           {"docs/reference/metrics.md", "| `nxdns_upstream_slots` | gauge | | The compiled slot count, {}. |", {slots}},
           {"docs/reference/config.md", "own concurrency ({} exchanges per upstream)", {cap}},
           {"docs/reference/api.md", "| `upstreams[].in_flight` | Exchanges running now (at most {}). |", {cap}},
           {"docs/architecture.md", "If that entry has fewer than {} exchanges in flight", {cap}},
           {"docs/architecture.md", "| slots per upstream | {} |", {slots}},
           {"docs/architecture.md", "| exchanges in flight per upstream | {} |", {cap}},
           {"docs/architecture.md", "up to {} joiners; the next one starts a new flight", {cache::CacheOptions{}.max_joiners}},
           {"docs/architecture.md", "| cache: joiners per flight, client response timer, stale TTL, stale failure recheck, "
                               "prefetch window | {},",
            {cache::CacheOptions{}.max_joiners}},
       }) {
    check(s);
  }
}

TEST(DocFigures, BudgetDefaults) {
  const auto attempt = upstream::default_attempt_budget, total = upstream::default_total_budget;
  for (const Sentence& s : std::vector<Sentence>{
           {"docs/reference/config.md", "| `attempt_ms` | integer | `{}` |", {ms(attempt)}},
           {"docs/reference/config.md", "| `total_ms` | integer | `{}` |", {ms(total)}},
           {"docs/reference/config.md", "raising `attempt_ms` above the default {} alone is an error", {ms(total)}},
           {"docs/reference/metrics.md", "its client's total budget ({} s by default)", {whole_seconds(total)}},
           {"docs/reference/metrics.md", "(`budgets.attempt_ms`, default {})", {ms(attempt)}},
           {"docs/architecture.md", "a total-budget timer (default {} s)", {whole_seconds(total)}},
           {"docs/architecture.md", "bounded by the attempt budget (default {} s)", {whole_seconds(attempt)}},
           {"docs/architecture.md", "| budgets by default: attempt / total; upstream dial timeout | {} s / {} s; {} s |",
            {whole_seconds(attempt), whole_seconds(total), whole_seconds(upstream::default_dial_timeout)}},
           {"examples/nxdns.yaml", "Integer 100..30000, default {}.", {ms(attempt)}},
           {"examples/nxdns.yaml", "200..60000, at least attempt_ms. Default {}.", {ms(total)}},
           {"nixos-module/default.nix",
            "attempt_ms = mkOption { type = types.ints.between 100 30000; default = {};", {ms(attempt)}},
           {"nixos-module/default.nix",
            "total_ms = mkOption { type = types.ints.between 200 60000; default = {};", {ms(total)}},
       }) {
    check(s);
  }
}

TEST(DocFigures, QueryPaddingAndQuerySize) {
  const std::uint64_t largest = dns::max_client_query;
  for (const Sentence& s : std::vector<Sentence>{
           {"docs/architecture.md", "| padding of queries to DoT and DoH upstreams | to a multiple of {} octets |",
            {dns::encrypted_query_pad_block}},
           {"docs/architecture.md", "| largest client query (UDP and TCP) | {} octets |", {largest}},
           {"docs/reference/config.md", "**Largest client query: {} octets**", {largest}},
           {"docs/reference/metrics.md", "| `tcp_frame_too_large` | a TCP query frame over {} octets", {largest}},
           {"docs/reference/metrics.md", "| `udp_query_too_large` | a UDP query over {} octets", {largest}},
       }) {
    check(s);
  }
}

TEST(DocFigures, RepeatedWarnings) {
  check({"docs/architecture.md", "| an upstream's repeated dial failure: warned again after | {} s (debug meanwhile) |",
         {whole_seconds(log::RepeatLimiter::window)}});
}
