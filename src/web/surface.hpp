#pragma once
// The daemon's HTTP surface: /metrics, /api/health, /api/diagnostics over
// live state. Every handler takes its snapshots when called, on the loop, so
// a response is one consistent view.
#include <functional>
#include <vector>

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
  const loop::Scheduler* sched = nullptr;
  loop::TimePoint started_at{};
  std::vector<net::Endpoint> udp;
  std::vector<net::Endpoint> tcp;
};

Routes daemon_routes(Sources src);

}  // namespace nxdns::web
