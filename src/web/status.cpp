#include "web/status.hpp"

#include <algorithm>
#include <chrono>

#include "web/json.hpp"
#include "web/metrics.hpp"

namespace nxdns::web {

namespace {

double seconds(loop::Duration d) { return std::chrono::duration<double>(d).count(); }

double round_ms(double s) { return round_to_ms(s); }

void family_counts(JsonWriter& w, const server::ListenerState& ls, bool tcp) {
  w.begin_object();
  w.key("ipv4").value(tcp ? ls.v4.tcp_connections : ls.v4.udp_in_flight);
  w.key("ipv6").value(tcp ? ls.v6.tcp_connections : ls.v6.udp_in_flight);
  w.end_object();
}

}  // namespace

double round_to_ms(double s) {
  return static_cast<double>(static_cast<long long>(s * 1000.0 + (s >= 0 ? 0.5 : -0.5))) / 1000.0;
}

const char* describe(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::degraded: return "degraded";
    case Status::down: return "down";
  }
  return "down";
}

Status overall_status(const std::vector<upstream::EntrySnapshot>& ups) {
  using upstream::HealthState;
  if (ups.empty()) return Status::down;
  bool any_healthy = false, all_backoff = true;
  for (const auto& s : ups) {
    any_healthy = any_healthy || s.health == HealthState::healthy;
    all_backoff = all_backoff && s.health == HealthState::backoff;
  }
  if (any_healthy) return Status::ok;
  return all_backoff ? Status::down : Status::degraded;
}

int http_status_for(Status s) { return s == Status::down ? 503 : 200; }

std::string render_health(const HealthInput& in) {
  std::vector<const upstream::EntrySnapshot*> ups;
  for (const auto& s : in.upstreams) ups.push_back(&s);
  std::stable_sort(ups.begin(), ups.end(), [](auto* a, auto* b) { return a->index < b->index; });

  JsonWriter w;
  w.begin_object();
  w.key("status").value(describe(overall_status(in.upstreams)));
  w.key("version").value(in.version);
  w.key("uptime_seconds").value(round_ms(in.uptime_seconds));
  w.key("upstreams").begin_array();
  for (const auto* s : ups) {
    w.begin_object();
    w.key("upstream").value(static_cast<std::uint64_t>(s->index));
    w.key("url").value(s->label);
    w.key("kind").value(s->kind);
    w.key("priority").value(s->priority);
    w.key("state").value(upstream::describe(s->health));
    w.key("consecutive_failures").value(s->consecutive_failures);
    w.key("backoff_until_seconds");
    if (s->health == upstream::HealthState::backoff) {
      w.value(round_ms(std::max(0.0, seconds(s->backoff_remaining))));
    } else {
      w.null();
    }
    // Why the latest attempt failed (null after a success), and the one
    // cause an operator fixes on this host, not upstream: its clock.
    w.key("last_failure");
    if (s->last_failure == upstream::Cause::ok) {
      w.null();
    } else {
      w.value(upstream::describe(s->last_failure));
    }
    w.key("certificate_clock_behind").value(s->last_failure == upstream::Cause::certificate_clock_behind);
    w.key("in_flight").value(s->in_flight);
    w.key("queue_depth").value(s->queue_depth);
    w.key("queued_total").value(s->queued_total);
    w.key("slots").value(s->slots);
    w.key("open_sessions").value(s->transport.open_sessions);
    w.key("reuse_recoveries").value(s->transport.reuse_recoveries);
    // Since start, from the same buckets as nxdns_upstream_latency_seconds
    // (interpolated inside a bucket: a few ms of resolution at DoT speeds).
    w.key("latency").begin_object();
    w.key("exchanges").value(s->latency.count());
    for (auto [name, q] : {std::pair{"p50_seconds", 0.5}, std::pair{"p95_seconds", 0.95}}) {
      w.key(name);
      if (auto v = s->latency.quantile(q)) {
        w.value(round_ms(*v));
      } else {
        w.null();
      }
    }
    w.end_object();
    w.key("pipelining").value(upstream::describe(s->transport.pipelining));
    w.key("tls_version");
    if (s->transport.tls_version.empty()) {
      w.null();
    } else {
      w.value(s->transport.tls_version);
    }
    // DoT only: curl's handshakes (DoH) are not seen by the daemon.
    w.key("tls_handshakes");
    if (s->kind == "dot") {
      w.begin_object();
      w.key("full").value(s->transport.handshakes.full);
      w.key("resumed").value(s->transport.handshakes.resumed);
      w.end_object();
    } else {
      w.null();
    }
    w.end_object();
  }
  w.end_array();

  w.key("listeners").begin_object();
  w.key("udp").begin_array();
  for (const auto& e : in.udp) w.value(e.to_string());
  w.end_array();
  w.key("tcp").begin_array();
  for (const auto& e : in.tcp) w.value(e.to_string());
  w.end_array();
  w.key("queries_in_flight").value(static_cast<std::uint64_t>(in.queries_in_flight));
  w.key("udp_in_flight");
  family_counts(w, in.listeners, false);
  w.key("udp_in_flight_cap").value(server::udp_in_flight_cap);
  w.key("tcp_connections");
  family_counts(w, in.listeners, true);
  w.key("tcp_connection_cap").value(server::tcp_connection_cap);
  // Replies by protocol and response code (the codes seen so far only), and
  // every rejection reason: the same counts as nxdns_queries_total and
  // nxdns_rejections_total.
  w.key("replies").begin_object();
  for (std::size_t p = 0; p < in.queries.replies_by_rcode.size(); ++p) {
    w.key(query::describe(static_cast<query::Protocol>(p))).begin_object();
    for (std::size_t rc = 0; rc < query::rcode_buckets; ++rc) {
      const std::uint64_t v = in.queries.replies_by_rcode[p][rc];
      if (v != 0) w.key(rcode_name(static_cast<unsigned>(rc))).value(v);
    }
    w.end_object();
  }
  w.end_object();
  w.key("rejections").begin_object();
  for (std::size_t r = 0; r < server::rejection_count; ++r) {
    w.key(server::describe(static_cast<server::Rejection>(r))).value(in.listeners.rejections[r]);
  }
  w.end_object();
  w.end_object();

  w.key("open_episodes").value(static_cast<std::uint64_t>(in.open_episodes));

  w.key("cache").begin_object();
  w.key("enabled").value(in.cache.has_value());
  if (in.cache) {
    const cache::CacheStats& c = *in.cache;
    w.key("entries").value(static_cast<std::uint64_t>(c.entries));
    w.key("bytes").value(static_cast<std::uint64_t>(c.bytes));
    w.key("max_bytes").value(static_cast<std::uint64_t>(c.max_bytes));
    w.key("hits").value(c.hits);
    w.key("misses").value(c.misses);
    w.key("hit_ratio");
    if (c.hits + c.misses == 0) {
      w.null();
    } else {
      w.value(round_ms(static_cast<double>(c.hits) / static_cast<double>(c.hits + c.misses)));
    }
    w.key("stale_answers").value(c.stale_served);
    if (in.persist) {
      const cache::PersistStats& p = *in.persist;
      w.key("persist").begin_object();
      w.key("load").value(cache::describe(p.load));
      w.key("loaded_entries").value(p.loaded_entries);
      w.key("load_seconds").value(round_ms(p.load_seconds));
      w.key("loaded_stale_only").value(p.loaded_stale_only);
      w.key("saves").value(p.saves);
      w.key("save_failures").value(p.save_failures);
      w.key("last_save_unix");
      if (p.last_save_unix) {
        w.value(static_cast<std::int64_t>(*p.last_save_unix));
      } else {
        w.null();
      }
      w.key("last_save_bytes").value(p.last_save_bytes);
      w.end_object();
    }
  }
  w.end_object();
  if (in.local) {
    w.key("local_names");
    write_local_names(w, *in.local, in.queries.routed.data());
  }
  if (in.blocking) {
    w.key("blocking");
    write_blocking(w, *in.blocking, in.queries.routed[static_cast<std::size_t>(route::RouteKind::blocked)]);
  }
  w.end_object();
  return w.take();
}

std::string render_history(const HistoryRing& ring, loop::Duration newest_age) {
  JsonWriter w;
  w.begin_object();
  w.key("interval_seconds").value(round_ms(seconds(history_interval)));
  w.key("capacity").value(static_cast<std::uint64_t>(history_capacity));
  w.key("samples").value(static_cast<std::uint64_t>(ring.size()));
  w.key("newest_seconds_ago");
  if (ring.size() == 0) {
    w.null();
  } else {
    w.value(round_ms(std::max(0.0, seconds(newest_age))));
  }
  auto series = [&](const char* name, auto get) {
    w.key(name).begin_array();
    for (std::size_t i = 0; i < ring.size(); ++i) get(ring.at(i));
    w.end_array();
  };
  series("queries_per_second", [&](const HistorySample& s) { w.value(round_ms(s.queries_per_second)); });
  series("latency_seconds", [&](const HistorySample& s) {
    if (s.latency_seconds) {
      w.value(round_ms(*s.latency_seconds));
    } else {
      w.null();
    }
  });
  series("queue_depth", [&](const HistorySample& s) { w.value(s.queue_depth); });
  series("in_flight", [&](const HistorySample& s) { w.value(s.in_flight); });
  series("queued", [&](const HistorySample& s) { w.value(s.queued); });
  w.end_object();
  return w.take();
}

std::string render_diagnostics(const std::vector<diag::Episode>& episodes, std::size_t capacity, loop::TimePoint now) {
  JsonWriter w;
  w.begin_object();
  w.key("capacity").value(static_cast<std::uint64_t>(capacity));
  w.key("episodes").begin_array();
  for (const auto& e : episodes) {
    w.begin_object();
    w.key("id").value(e.id);
    w.key("upstream").value(static_cast<std::uint64_t>(e.upstream));
    w.key("url").value(e.url);
    w.key("open").value(e.open);
    w.key("started_at").value(diag::format_utc(e.started_wall));
    w.key("started_seconds_ago").value(round_ms(seconds(now - e.started)));
    w.key("ended_at");
    if (e.open) {
      w.null();
    } else {
      w.value(diag::format_utc(e.ended_wall));
    }
    w.key("duration_seconds").value(round_ms(seconds((e.open ? now : e.ended) - e.started)));
    w.key("failures").value(e.failures);
    w.key("first_cause").value(upstream::describe(e.first_cause));
    w.key("first_detail").value(e.first_detail);
    w.key("last_cause").value(upstream::describe(e.last_cause));
    w.key("last_detail").value(e.last_detail);
    w.key("causes").begin_object();
    for (std::size_t c = 0; c < e.by_cause.size(); ++c) {
      if (e.by_cause[c] != 0) w.key(upstream::describe(static_cast<upstream::Cause>(c))).value(e.by_cause[c]);
    }
    w.end_object();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take();
}

}  // namespace nxdns::web
