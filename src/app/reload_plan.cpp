#include "app/reload_plan.hpp"

#include <algorithm>

#include "log/log.hpp"

namespace nxdns::app {

namespace {

// Everything but the trust anchors' contents.
bool same_upstream_but_anchors(const config::Upstream& a, const config::Upstream& b) {
  return a.protocol == b.protocol && a.url == b.url && a.address == b.address && a.tls_name == b.tls_name &&
         a.ca_file == b.ca_file && a.method == b.method;
}

bool contains(const std::vector<net::Endpoint>& v, const net::Endpoint& e) {
  return std::find(v.begin(), v.end(), e) != v.end();
}

bool same_cache_settings(const config::Cache& a, const config::Cache& b) {
  return a.max_bytes == b.max_bytes && a.min_ttl == b.min_ttl && a.max_ttl == b.max_ttl && a.prefetch == b.prefetch &&
         a.serve_stale == b.serve_stale && a.stale_window == b.stale_window;
}

}  // namespace

bool same_upstream(const config::Upstream& a, const config::Upstream& b) {
  // A running transport verifies with the anchors it read when it was built
  // (DoT: its TLS config; DoH: libcurl's cached CA store), so the same path
  // with other certificates in it means other trust anchors.
  return same_upstream_but_anchors(a, b) && a.ca_digest == b.ca_digest;
}

ReloadPlan plan_reload(const config::Config& running, const config::Config& next) {
  ReloadPlan p;
  std::vector<bool> matched(next.upstreams.size(), false);
  for (std::size_t i = 0; i < running.upstreams.size(); ++i) {
    const config::Upstream& old = running.upstreams[i];
    if (!old.enabled) continue;
    bool kept = false;
    // The loader rejects two entries for the same server, so at most one
    // new entry matches.
    for (std::size_t j = 0; j < next.upstreams.size() && !kept; ++j) {
      const config::Upstream& nu = next.upstreams[j];
      if (matched[j] || !nu.enabled || !same_upstream(old, nu)) continue;
      matched[j] = true;
      kept = true;
      p.keep.push_back({i, j, nu.priority});
    }
    if (!kept) p.drain.push_back(i);
  }
  for (std::size_t j = 0; j < next.upstreams.size(); ++j) {
    if (!matched[j] && next.upstreams[j].enabled) p.start.push_back(j);
  }
  for (const std::size_t j : p.start) {
    const bool anchors_only = std::any_of(p.drain.begin(), p.drain.end(), [&](std::size_t i) {
      return same_upstream_but_anchors(running.upstreams[i], next.upstreams[j]);
    });
    if (anchors_only) p.new_trust_anchors.push_back(j);
  }

  for (const auto& e : running.listen) (contains(next.listen, e) ? p.keep_listen : p.close_listen).push_back(e);
  for (const auto& e : next.listen)
    if (!contains(running.listen, e)) p.open_listen.push_back(e);

  p.budgets_changed =
      running.budgets.attempt != next.budgets.attempt || running.budgets.total != next.budgets.total;
  p.log_level_changed = running.log_level != next.log_level;

  // The HTTP surface is bound once and its routes hold the daemon's parts;
  // the cache is created with the daemon (the engine and the surface hold
  // it). Turning either on or off, or moving the surface, is a restart.
  if (running.http.enabled != next.http.enabled) p.needs_restart.emplace_back("http.enabled");
  else if (running.http.enabled && !(running.http.listen == next.http.listen)) p.needs_restart.emplace_back("http.listen");
  if (running.cache.enabled != next.cache.enabled) p.needs_restart.emplace_back("cache.enabled");
  else if (running.cache.enabled) p.cache_changed = !same_cache_settings(running.cache, next.cache);
  // The cache file is read once, at start, and its writer is built with
  // the daemon: a new file or cadence takes effect at the next start.
  if (running.cache.persist_file != next.cache.persist_file) p.needs_restart.emplace_back("cache.persist_file");
  if (running.cache.persist_interval != next.cache.persist_interval)
    p.needs_restart.emplace_back("cache.persist_interval");
  return p;
}

std::string describe(const ReloadPlan& p) {
  std::string s = log::cat("upstreams: ", p.keep.size(), " kept, ", p.drain.size(), " drained, ", p.start.size(),
                           " started; listeners: ", p.keep_listen.size(), " kept, ", p.close_listen.size(), " closed, ",
                           p.open_listen.size(), " opened");
  if (!p.new_trust_anchors.empty()) {
    std::string which;
    for (const auto j : p.new_trust_anchors) which += log::cat(which.empty() ? "" : ", ", j);
    s += log::cat("; new trust anchors (ca_file contents changed) for upstream(s) ", which,
                  ": new sessions verify against them");
  }
  if (p.budgets_changed) s += "; budgets changed";
  if (p.cache_changed) s += "; cache settings changed (entries kept)";
  if (p.log_level_changed) s += "; log level changed";
  if (!p.needs_restart.empty()) {
    std::string keys;
    for (const auto& k : p.needs_restart) keys += (keys.empty() ? "" : ", ") + k;
    s += "; NOT applied, needs a restart: " + keys;
  }
  return s;
}

}  // namespace nxdns::app
