#pragma once
// The daemon's HTTP surface: the status page (/, /summary and its assets),
// /metrics, /api/health, /api/diagnostics, /api/history, /api/openapi.json
// over live state, and the operator's POST /api/cache/flush. Every handler
// takes its snapshots when called, on the loop, so a response is one
// consistent view.
#include <functional>
#include <vector>

#include "cache/caching_pool.hpp"
#include "cache/persistence.hpp"
#include "diag/diagnostics.hpp"
#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"
#include "query/engine.hpp"
#include "server/limits.hpp"
#include "upstream/pool.hpp"
#include "web/http_server.hpp"
#include "web/blocking_status.hpp"
#include "web/local_names.hpp"

namespace nxdns::web {

// What the handlers read. Everything must outlive the HttpServer the routes
// are handed to (the daemon destroys the server first).
struct Sources {
  const upstream::Pool* pool = nullptr;
  const query::Engine* engine = nullptr;
  const server::ListenerState* listeners = nullptr;
  const diag::Diagnostics* diagnostics = nullptr;
  cache::CachingPool* cache = nullptr;  // null when cache.enabled is false
  const cache::CachePersistence* persist = nullptr;  // null without cache.persist_file
  // Not const: the history sampler's timer runs on it.
  loop::Scheduler* sched = nullptr;
  loop::TimePoint started_at{};
  std::vector<net::Endpoint> udp;
  std::vector<net::Endpoint> tcp;
  // When set, read on every request instead of udp/tcp (a reload may
  // rebind listeners).
  std::function<std::vector<net::Endpoint>()> udp_now;
  std::function<std::vector<net::Endpoint>()> tcp_now;
  // The routing step's state (status page, /api/health), read per request.
  std::function<LocalNamesStatus()> local_now;
  std::function<BlockingStatus()> blocking_now;
};

// Also starts the history sampler (one sample a second, owned by the
// routes, so it stops when the HttpServer holding them is destroyed).
Routes daemon_routes(Sources src);

// The status page's Content-Security-Policy: nothing but this server's own
// script, style and icon; no inline code, no frames, no forms.
inline constexpr const char* page_csp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
// POST /api/cache/flush (everything) and /api/cache/flush?name=NAME (every
// entry under that name): the operator's flush, which `nxdns cache flush`
// calls. Loopback peers only, and no web page of another origin (HttpServer
// enforces both: action_guard.hpp); nothing on the DNS side reaches it.
// `also` flushes the LAN servers' caches with the main one.
PostRoutes daemon_post_routes(cache::CachingPool* cache, std::function<std::size_t(const std::string* name)> also = {});

}  // namespace nxdns::web
