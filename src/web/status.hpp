#pragma once
// /api/health and /api/diagnostics: JSON documents rendered by pure
// functions from snapshots (see docs/reference/api.md for the schema).
#include <string>
#include <vector>

#include <optional>

#include "cache/caching_pool.hpp"
#include "diag/diagnostics.hpp"
#include "net/endpoint.hpp"
#include "server/limits.hpp"
#include "upstream/pool.hpp"

namespace nxdns::web {

inline constexpr const char* json_content_type = "application/json; charset=utf-8";

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
  server::ListenerState listeners;
  std::size_t open_episodes = 0;
  std::optional<cache::CacheStats> cache;  // absent: cache.enabled is false
};

std::string render_health(const HealthInput& in);

// `now` (the loop clock) turns episode instants into ages and durations.
std::string render_diagnostics(const std::vector<diag::Episode>& episodes, std::size_t capacity, loop::TimePoint now);

}  // namespace nxdns::web
