#pragma once
// /api/health and /api/diagnostics: JSON documents rendered by pure
// functions from snapshots (see docs/reference/api.md for the schema).
#include <string>
#include <vector>

#include <optional>

#include "cache/caching_pool.hpp"
#include "cache/persistence.hpp"
#include "diag/diagnostics.hpp"
#include "net/endpoint.hpp"
#include "query/engine.hpp"
#include "server/limits.hpp"
#include "upstream/pool.hpp"
#include "web/history_ring.hpp"
#include "web/blocking_status.hpp"
#include "web/local_names.hpp"

namespace nxdns::web {

inline constexpr const char* json_content_type = "application/json; charset=utf-8";

// Every time or ratio in the documents (and on the status page) has
// millisecond resolution: plenty for humans, and documents stay short.
double round_to_ms(double s);

enum class Status { ok, degraded, down };
const char* describe(Status s);

// ok: at least one upstream is healthy (queries are being answered by
// something that is not failing); down: every upstream is in backoff (or
// there is none); degraded: anything in between (no upstream healthy, at
// least one failing but still tried on the first pass, or half-open with its
// backoff over and a probe let through).
Status overall_status(const std::vector<upstream::EntrySnapshot>& ups);
// HTTP status for a health document: 503 only when down, so a load
// balancer or systemd watchdog script can use the code alone.
int http_status_for(Status s);

struct HealthInput {
  std::string version;
  double uptime_seconds = 0.0;
  std::vector<upstream::EntrySnapshot> upstreams;
  std::vector<net::Endpoint> udp;
  std::vector<net::Endpoint> tcp;
  std::size_t queries_in_flight = 0;
  query::QueryCounters queries;
  server::ListenerState listeners;
  std::size_t open_episodes = 0;
  std::optional<cache::CacheStats> cache;  // absent: cache.enabled is false
  std::optional<cache::PersistStats> persist;  // absent: no cache.persist_file (or no cache)
  std::optional<LocalNamesStatus> local;  // absent: no routing step (tests)
  std::optional<BlockingStatus> blocking;  // absent: no blocking service (tests)
};

std::string render_health(const HealthInput& in);

// /api/history: the ring oldest first, as one array per series (compact:
// the page fetches all of it on every refresh). `newest_age` is how long
// ago the newest sample was taken.
std::string render_history(const HistoryRing& ring, loop::Duration newest_age);

// `now` (the loop clock) turns episode instants into ages and durations.
std::string render_diagnostics(const std::vector<diag::Episode>& episodes, std::size_t capacity, loop::TimePoint now);

}  // namespace nxdns::web
