#pragma once
// The daemon's HTTP surface: /metrics, /api/health, /api/diagnostics over
// live state, and the operator's POST /api/cache/flush. Every handler takes its snapshots when called, on the loop, so
// a response is one consistent view.
#include <functional>
#include <vector>

#include "cache/caching_pool.hpp"
#include "diag/diagnostics.hpp"
#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"
#include "query/engine.hpp"
#include "server/limits.hpp"
#include "upstream/pool.hpp"
#include "web/http_server.hpp"

namespace nxdns::web {

// What the handlers read. Everything must outlive the HttpServer the routes
// are handed to (the daemon destroys the server first).
struct Sources {
  const upstream::Pool* pool = nullptr;
  const query::Engine* engine = nullptr;
  const server::ListenerState* listeners = nullptr;
  const diag::Diagnostics* diagnostics = nullptr;
  cache::CachingPool* cache = nullptr;  // null when cache.enabled is false
  const loop::Scheduler* sched = nullptr;
  loop::TimePoint started_at{};
  std::vector<net::Endpoint> udp;
  std::vector<net::Endpoint> tcp;
};

Routes daemon_routes(Sources src);
// POST /api/cache/flush (everything) and /api/cache/flush?name=NAME (every
// entry under that name): the operator's flush, which `nxdns cache flush`
// calls. Loopback peers only (HttpServer enforces it); nothing on the DNS
// side reaches it.
PostRoutes daemon_post_routes(cache::CachingPool* cache);

}  // namespace nxdns::web
