#pragma once
// /metrics: Prometheus text exposition format 0.0.4, rendered by a pure
// function from snapshots the loop takes at scrape time. Pure so that tests
// pin every series without a socket, and so that a scrape reads state
// exactly once (one consistent view: the loop is not running meanwhile).
//
// Every series is documented in docs/reference/metrics.md; keep the two in
// step. Output passes `promtool check metrics`: each family has HELP and
// TYPE, appears once, and counters end in _total.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include "cache/caching_pool.hpp"
#include "cache/persistence.hpp"
#include "query/engine.hpp"
#include "server/limits.hpp"
#include "upstream/pool.hpp"
#include "web/blocking_status.hpp"
#include "web/local_names.hpp"

namespace nxdns::web {

inline constexpr const char* metrics_content_type = "text/plain; version=0.0.4; charset=utf-8";

struct BuildInfo {
  std::string version;
  std::string mbedtls;
  std::string curl;
  std::string libevent;
  std::string microhttpd;
};
// Versions of nxdns and of the libraries it runs with (run-time versions,
// which is what a bug report needs).
BuildInfo build_info();

struct MetricsInput {
  std::vector<upstream::EntrySnapshot> upstreams;  // any order; rendered by config index
  query::QueryCounters queries;
  std::size_t queries_in_flight = 0;
  server::ListenerState listeners;
  BuildInfo build;
  double uptime_seconds = 0.0;
  std::uint64_t episodes_opened_total = 0;
  std::size_t episodes_open = 0;
  std::optional<cache::CacheStats> cache;  // absent: cache.enabled is false
  std::optional<cache::PersistStats> persist;  // absent: no cache.persist_file (or no cache)
  std::optional<LocalNamesStatus> local;  // absent: no routing step (tests)
  std::optional<BlockingStatus> blocking;  // absent: no blocking service (tests)
};

std::string render_metrics(const MetricsInput& in);

// A label value escaped per the exposition format: backslash, double quote
// and line feed become \\, \" and \n.
std::string escape_label_value(std::string_view v);
// A sample value: integers exactly, other numbers in shortest round-trip
// form, +Inf / -Inf / NaN spelled as the format wants.
std::string format_sample(double v);

// "NOERROR", "SERVFAIL", ..., "BADVERS", ... for a 12-bit rcode ("RCODE12"
// for unassigned low codes, "OTHER" above BADCOOKIE: the /metrics label set).
const char* rcode_name(unsigned rcode);

}  // namespace nxdns::web
