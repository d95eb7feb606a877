#pragma once
// What a configuration reload changes, decided from the two configurations
// alone (no sockets, no sessions): which upstreams keep their transport
// (sessions, health, counters), which drain, which start; which listeners
// stay bound, close or open; which settings apply in place; and which need
// a restart. The daemon applies the plan (Daemon::reload); the table test
// pins the decisions.
#include <cstddef>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "net/endpoint.hpp"

namespace nxdns::app {

// Two upstream entries are the same upstream when everything the transport
// is built from is the same: kind, URL, dial address, TLS name, trust
// anchors (the ca_file path and the contents the loader read from it) and
// DoH method. Priority is not identity (it only reorders failover), nor is
// the entry's place in the file.
bool same_upstream(const config::Upstream& a, const config::Upstream& b);

struct ReloadPlan {
  // Configuration indexes (the `upstream` metric label). Only enabled
  // upstreams take part: disabling one drains it, enabling one starts it.
  struct Kept {
    std::size_t old_index = 0;
    std::size_t new_index = 0;
    int priority = 0;  // the new one
  };
  std::vector<Kept> keep;
  std::vector<std::size_t> drain;  // old indexes: no new exchanges, then closed
  std::vector<std::size_t> start;  // new indexes: transports built and added
  // New indexes in `start` whose only change is the contents of their
  // ca_file: drained and started like any changed upstream, so that new
  // sessions verify against the new anchors; named in the log line.
  std::vector<std::size_t> new_trust_anchors;

  std::vector<net::Endpoint> keep_listen;   // stay bound: not a query lost
  std::vector<net::Endpoint> close_listen;  // stop reading, closed after the drain
  std::vector<net::Endpoint> open_listen;   // bound before anything else applies

  bool budgets_changed = false;  // apply to queries that arrive from now on
  bool cache_changed = false;    // size, TTL clamp, prefetch, serve-stale: in place, no flush (not the cache file's keys)
  bool log_level_changed = false;
  // Settings that cannot change in a running daemon, as key paths
  // ("http.listen"); the reload applies everything else and says these
  // need a restart.
  std::vector<std::string> needs_restart;
};

ReloadPlan plan_reload(const config::Config& running, const config::Config& next);

// One line for the log: "upstreams: 1 kept, 1 drained, 1 started; listeners: ..."
std::string describe(const ReloadPlan& p);

}  // namespace nxdns::app
