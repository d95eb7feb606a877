#include "web/metrics.hpp"

#include <event2/event.h>
#include <mbedtls/version.h>
#include <microhttpd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "nxdns/version.hpp"
#include "upstream/curl_library.hpp"
#include "web/json.hpp"

namespace nxdns::web {

namespace {

using upstream::Cause;
using upstream::EntrySnapshot;
using upstream::HealthState;

// One label per query::rcode_bucket: IANA "DNS RCODEs" 0..23 (16 is
// BADVERS when it comes with an OPT, which is the only way a client sees
// it), then one shared label for anything higher, so the series stay bounded.
constexpr const char* rcode_names[query::rcode_buckets] = {
    "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP",  "REFUSED", "YXDOMAIN", "YXRRSET", "NXRRSET",
    "NOTAUTH", "NOTZONE", "DSOTYPENI", "RCODE12", "RCODE13", "RCODE14", "RCODE15",  "BADVERS", "BADKEY",
    "BADTIME", "BADMODE", "BADNAME", "BADALG",  "BADTRUNC", "BADCOOKIE", "OTHER"};
constexpr unsigned always_rcodes = 6;  // NOERROR .. REFUSED

constexpr const char* protocols[2] = {"udp", "tcp"};

std::string help_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '\\') o += "\\\\";
    else if (c == '\n') o += "\\n";
    else o.push_back(c);
  }
  return o;
}

// One exposition document. Families are written whole (HELP, TYPE, every
// sample) before the next begins: the format forbids interleaving.
class Doc {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help_escape(help);
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  void sample(std::string_view name, const std::string& labels, const std::string& value) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      out_ += labels;
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }
  void sample(std::string_view name, const std::string& labels, std::uint64_t v) {
    sample(name, labels, std::to_string(v));
  }
  void sample_d(std::string_view name, const std::string& labels, double v) { sample(name, labels, format_sample(v)); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string label(std::string_view k, std::string_view v) {
  std::string s(k);
  s += "=\"";
  s += escape_label_value(v);
  s += '"';
  return s;
}

std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : b.empty() ? a : a + "," + b; }

std::string upstream_labels(const EntrySnapshot& s) {
  // LAN servers are no entry of `upstreams`: their label is "lan:" and the
  // address, which also tells them from the encrypted upstreams.
  const bool lan = s.kind == "dns";
  return label("upstream", lan ? "lan:" + s.label.substr(s.label.find("//") + 2) : std::to_string(s.index)) + "," +
         label("url", s.label);
}

// Per-upstream family with one sample per upstream.
template <class F>
void per_upstream(Doc& d, const std::vector<const EntrySnapshot*>& ups, const char* name, const char* type,
                  const char* help, F value) {
  d.family(name, type, help);
  for (const auto* s : ups) d.sample(name, upstream_labels(*s), value(*s));
}

// One histogram series: cumulative buckets, +Inf, sum and count.
void histogram_series(Doc& d, const std::string& name, const std::string& labels,
                      const upstream::LatencyHistogram& h) {
  std::uint64_t cum = 0;
  for (std::size_t i = 0; i < upstream::LatencyHistogram::bounds.size(); ++i) {
    cum += h.bucket(i);
    d.sample(name + "_bucket", join(labels, label("le", format_sample(upstream::LatencyHistogram::bounds[i]))), cum);
  }
  cum += h.bucket(upstream::LatencyHistogram::bounds.size());
  d.sample(name + "_bucket", join(labels, label("le", "+Inf")), cum);
  d.sample_d(name + "_sum", labels, h.sum_seconds());
  d.sample(name + "_count", labels, h.count());
}

// TLS handshakes of the DoT upstreams (DoH's are curl's and not seen here).
void render_handshakes(Doc& d, const std::vector<const EntrySnapshot*>& ups) {
  std::vector<const EntrySnapshot*> dot;
  for (const auto* s : ups) {
    if (s->kind == "dot") dot.push_back(s);
  }
  if (dot.empty()) return;
  constexpr upstream::HandshakeKind kinds[] = {upstream::HandshakeKind::full, upstream::HandshakeKind::resumed};
  d.family("nxdns_upstream_tls_handshakes_total", "counter",
           "Completed TLS handshakes by kind: full (certificate chain verified) or resumed (session ticket).");
  for (const auto* s : dot) {
    for (auto k : kinds) {
      d.sample("nxdns_upstream_tls_handshakes_total", join(upstream_labels(*s), label("kind", upstream::describe(k))),
               s->transport.handshakes.count(k));
    }
  }
  per_upstream(d, dot, "nxdns_upstream_tls_resumptions_refused_total", "counter",
               "Handshakes that offered a session ticket and got a full handshake instead (also counted as full; "
               "a fallback in the same attempt, not a failure).",
               [](const EntrySnapshot& s) { return std::to_string(s.transport.handshakes.resumption_refused); });
  d.family("nxdns_upstream_tls_handshake_seconds", "histogram",
           "TLS handshake duration by kind, from TCP established to TLS finished.");
  for (const auto* s : dot) {
    for (auto k : kinds) {
      histogram_series(d, "nxdns_upstream_tls_handshake_seconds",
                       join(upstream_labels(*s), label("kind", upstream::describe(k))),
                       s->transport.handshakes.duration(k));
    }
  }
}

void render_upstreams(Doc& d, const std::vector<const EntrySnapshot*>& ups) {
  d.family("nxdns_upstream_info", "gauge",
           "Configured upstream: transport kind and priority (lower is preferred). Always 1.");
  for (const auto* s : ups) {
    d.sample("nxdns_upstream_info",
             join(upstream_labels(*s), label("kind", s->kind) + "," + label("priority", std::to_string(s->priority))),
             std::string("1"));
  }
  per_upstream(d, ups, "nxdns_upstream_in_flight", "gauge",
               "Exchanges running against this upstream now (at most nxdns_upstream_max_in_flight).",
               [](const EntrySnapshot& s) { return std::to_string(s.in_flight); });
  per_upstream(d, ups, "nxdns_upstream_max_in_flight", "gauge",
               "Compiled cap on concurrent exchanges per upstream; callers beyond it queue.",
               [](const EntrySnapshot&) { return std::to_string(upstream::max_in_flight_per_entry); });
  per_upstream(d, ups, "nxdns_upstream_slots", "gauge",
               "Compiled connection slots per upstream (DoT: TLS sessions; DoH: connection allowance).",
               [](const EntrySnapshot& s) { return std::to_string(s.slots); });
  per_upstream(d, ups, "nxdns_upstream_capacity", "gauge",
               "Exchanges the transport can run at once now (DoH: connections x streams the server allows); "
               "the pool admits up to this many, callers beyond it queue.",
               [](const EntrySnapshot& s) { return std::to_string(s.capacity); });
  per_upstream(d, ups, "nxdns_upstream_queue_depth", "gauge",
               "Callers waiting in this upstream's FIFO for capacity right now (exact).",
               [](const EntrySnapshot& s) { return std::to_string(s.queue_depth); });
  per_upstream(d, ups, "nxdns_upstream_queued_total", "counter",
               "Callers that waited in this upstream's queue, counted when they left it (by acquiring capacity "
               "or by being cancelled, e.g. the total budget ran out while queued).",
               [](const EntrySnapshot& s) { return std::to_string(s.queued_total); });
  per_upstream(d, ups, "nxdns_upstream_queued_seconds_total", "counter",
               "Total seconds callers spent in this upstream's queue, added when they left it.",
               [](const EntrySnapshot& s) { return format_sample(s.queued_seconds_total); });
  per_upstream(d, ups, "nxdns_upstream_open_sessions", "gauge",
               "Open connections to this upstream (DoT: established TLS sessions).",
               [](const EntrySnapshot& s) { return std::to_string(s.transport.open_sessions); });
  per_upstream(d, ups, "nxdns_upstream_connections_total", "counter",
               "New connections to this upstream that completed their handshake.",
               [](const EntrySnapshot& s) { return std::to_string(s.transport.connections_new); });

  d.family("nxdns_upstream_exchanges_total", "counter",
           "Exchanges by the connection they ran on: new (dialed for them) or reused (already open).");
  for (const auto* s : ups) {
    d.sample("nxdns_upstream_exchanges_total", join(upstream_labels(*s), label("session", "new")),
             s->transport.exchanges_new);
    d.sample("nxdns_upstream_exchanges_total", join(upstream_labels(*s), label("session", "reused")),
             s->transport.exchanges_reused);
  }
  per_upstream(d, ups, "nxdns_upstream_redials_total", "counter",
               "One-redial attempts after a reused connection died before any byte of the answer arrived.",
               [](const EntrySnapshot& s) { return std::to_string(s.transport.redials); });
  per_upstream(d, ups, "nxdns_upstream_reuse_recoveries_total", "counter",
               "Stale reused connections recovered by their one redial (normal churn, not a failure).",
               [](const EntrySnapshot& s) { return std::to_string(s.transport.reuse_recoveries); });
  per_upstream(d, ups, "nxdns_upstream_requeued_total", "counter",
               "Exchanges placed again after a connection that had answered others closed with them unanswered "
               "(RFC 7766 6.2.4: servers that limit queries per connection). Not failures, not redials.",
               [](const EntrySnapshot& s) { return std::to_string(s.transport.requeued); });

  per_upstream(d, ups, "nxdns_upstream_resent_total", "counter",
               "DoT exchanges sent a second time on another session (at most once each) because theirs proved to "
               "answer one query at a time, left them unanswered or stayed silent; the first answer wins.",
               [](const EntrySnapshot& s) { return std::to_string(s.transport.resent); });
  per_upstream(d, ups, "nxdns_upstream_hedged_total", "counter",
               "DoT exchanges of a cold burst, before any pipelining verdict, copied onto the first session up "
               "while their own sessions were still handshaking; the first answer wins.",
               [](const EntrySnapshot& s) { return std::to_string(s.transport.hedged); });
  per_upstream(d, ups, "nxdns_upstream_outage_dials_total", "counter",
               "DoT dials made at once for the next exchanges because every exchange since the upstream last "
               "answered had failed or stalled (an outage): its connections from before were not trusted.",
               [](const EntrySnapshot& s) { return std::to_string(s.transport.outage_dials); });
  d.family("nxdns_upstream_pipelining", "gauge",
           "Whether this upstream answers pipelined queries concurrently, as learned from its answers (DoT; "
           "unknown until seen, and again after 10 minutes without evidence): 1 for the current verdict.");
  for (const auto* s : ups) {
    for (auto v : {upstream::PipeliningVerdict::unknown, upstream::PipeliningVerdict::pipelining,
                   upstream::PipeliningVerdict::serial}) {
      d.sample("nxdns_upstream_pipelining", join(upstream_labels(*s), label("verdict", upstream::describe(v))),
               std::string(s->transport.pipelining == v ? "1" : "0"));
    }
  }

  d.family("nxdns_upstream_tls_info", "gauge",
           "TLS version of the newest connection to this upstream (version=\"none\" before the first). Always 1.");
  for (const auto* s : ups) {
    d.sample("nxdns_upstream_tls_info",
             join(upstream_labels(*s), label("version", s->transport.tls_version.empty() ? "none"
                                                                                          : s->transport.tls_version)),
             std::string("1"));
  }
  render_handshakes(d, ups);

  d.family("nxdns_upstream_health", "gauge",
           "Health state of this upstream: 1 for the current state, 0 for the others.");
  for (const auto* s : ups) {
    for (auto st : {HealthState::healthy, HealthState::failing, HealthState::backoff, HealthState::probing}) {
      d.sample("nxdns_upstream_health", join(upstream_labels(*s), label("state", upstream::describe(st))),
               std::string(s->health == st ? "1" : "0"));
    }
  }
  per_upstream(d, ups, "nxdns_upstream_certificate_clock_behind", "gauge",
               "1 while this upstream's latest attempt failed only because this host's clock is behind the "
               "certificate's notBefore (no RTC, no NTP yet); 0 otherwise.",
               [](const EntrySnapshot& s) {
                 return std::string(s.last_failure == upstream::Cause::certificate_clock_behind ? "1" : "0");
               });
  per_upstream(d, ups, "nxdns_upstream_backoff_seconds", "gauge",
               "Seconds until this upstream's backoff ends (0 when not in backoff).", [](const EntrySnapshot& s) {
                 const double v = std::chrono::duration<double>(s.backoff_remaining).count();
                 return format_sample(v > 0 ? v : 0.0);
               });
  per_upstream(d, ups, "nxdns_upstream_consecutive_failures", "gauge",
               "Failed attempts in a row against this upstream (0 after a success).",
               [](const EntrySnapshot& s) { return std::to_string(s.consecutive_failures); });
  per_upstream(d, ups, "nxdns_upstream_backoffs_total", "counter", "Times this upstream was put into backoff.",
               [](const EntrySnapshot& s) { return std::to_string(s.backoffs_total); });

  d.family("nxdns_upstream_attempts_total", "counter",
           "Finished attempts against this upstream by outcome (ok, or the failure cause).");
  for (const auto* s : ups) {
    for (std::size_t c = 0; c < upstream::cause_count; ++c) {
      d.sample("nxdns_upstream_attempts_total",
               join(upstream_labels(*s), label("outcome", upstream::describe(static_cast<Cause>(c)))),
               s->outcomes[c]);
    }
  }

  // The four RCODEs a resolver sends to a well-formed query, and the rest
  // (meaningless in an answer to a QUERY) summed, so the series set is fixed.
  d.family("nxdns_upstream_error_answers_total", "counter",
           "Answers whose RCODE sent the query on to the next upstream (counted as outcome error_answer), by "
           "RCODE. Only REFUSED, NOTIMP, FORMERR and other count against health; SERVFAIL does not.");
  for (const auto* s : ups) {
    std::uint64_t other = 0;
    for (std::size_t rc = 6; rc < s->error_answers.size(); ++rc) other += s->error_answers[rc];
    for (std::size_t rc : {1, 2, 4, 5}) {  // FORMERR, SERVFAIL, NOTIMP, REFUSED
      d.sample("nxdns_upstream_error_answers_total", join(upstream_labels(*s), label("rcode", rcode_names[rc])),
               s->error_answers[rc]);
    }
    d.sample("nxdns_upstream_error_answers_total", join(upstream_labels(*s), label("rcode", "OTHER")), other);
  }

  d.family("nxdns_upstream_latency_seconds", "histogram",
           "Duration of successful attempts against this upstream (dial included when one was needed).");
  for (const auto* s : ups) {
    const auto& h = s->latency;
    const std::string base = upstream_labels(*s);
    std::uint64_t cum = 0;
    for (std::size_t i = 0; i < upstream::LatencyHistogram::bounds.size(); ++i) {
      cum += h.bucket(i);
      d.sample("nxdns_upstream_latency_seconds_bucket",
               join(base, label("le", format_sample(upstream::LatencyHistogram::bounds[i]))), cum);
    }
    cum += h.bucket(upstream::LatencyHistogram::bounds.size());
    d.sample("nxdns_upstream_latency_seconds_bucket", join(base, label("le", "+Inf")), cum);
    d.sample_d("nxdns_upstream_latency_seconds_sum", base, h.sum_seconds());
    d.sample("nxdns_upstream_latency_seconds_count", base, h.count());
  }
}

void render_listeners(Doc& d, const MetricsInput& in) {
  const auto& q = in.queries;
  d.family("nxdns_queries_total", "counter", "Replies sent to clients by transport protocol and response code.");
  for (std::size_t p = 0; p < 2; ++p) {
    for (unsigned rc = 0; rc < query::rcode_buckets; ++rc) {
      const std::uint64_t v = q.replies_by_rcode[p][rc];
      if (rc >= always_rcodes && v == 0) continue;
      d.sample("nxdns_queries_total", join(label("protocol", protocols[p]), label("rcode", rcode_names[rc])), v);
    }
  }
  d.family("nxdns_queries_in_flight", "gauge", "Client queries admitted and not yet answered.");
  d.sample("nxdns_queries_in_flight", "", static_cast<std::uint64_t>(in.queries_in_flight));

  d.family("nxdns_query_failures_total", "counter",
           "Client queries answered SERVFAIL, by reason: budget_exhausted (the total budget ran out, queue "
           "included), upstream_failed (every attempt failed), bad_upstream_answer (it did not match the question, or "
           "could not be rewritten for the client).");
  d.sample("nxdns_query_failures_total", label("reason", "budget_exhausted"), q.budget_exhausted);
  d.sample("nxdns_query_failures_total", label("reason", "upstream_failed"), q.upstream_failed);
  d.sample("nxdns_query_failures_total", label("reason", "bad_upstream_answer"), q.bad_upstream_answer);

  d.family("nxdns_queries_abandoned_total", "counter", "Client queries whose client went away before the answer.");
  d.sample("nxdns_queries_abandoned_total", "", q.abandoned);

  d.family("nxdns_queries_malformed_total", "counter",
           "Client packets that did not parse as a query: answered FORMERR when the header was readable, else "
           "dropped.");
  for (std::size_t p = 0; p < 2; ++p) {
    d.sample("nxdns_queries_malformed_total", join(label("protocol", protocols[p]), label("action", "formerr")),
             q.formerr_unparseable[p]);
    d.sample("nxdns_queries_malformed_total", join(label("protocol", protocols[p]), label("action", "dropped")),
             q.dropped_unreadable[p]);
  }

  const auto& ls = in.listeners;
  d.family("nxdns_rejections_total", "counter",
           "Listener-side rejections and losses by reason (caps, hostile or stalled TCP clients, socket errors).");
  for (std::size_t r = 0; r < server::rejection_count; ++r) {
    d.sample("nxdns_rejections_total", label("reason", server::describe(static_cast<server::Rejection>(r))),
             ls.rejections[r]);
  }
  d.family("nxdns_tcp_connections", "gauge", "Open client TCP connections by address family (cap 64 per family).");
  d.sample("nxdns_tcp_connections", label("family", "ipv4"), static_cast<std::uint64_t>(ls.v4.tcp_connections));
  d.sample("nxdns_tcp_connections", label("family", "ipv6"), static_cast<std::uint64_t>(ls.v6.tcp_connections));
  d.family("nxdns_udp_in_flight", "gauge", "Client UDP queries being worked on by address family (cap 64 per family).");
  d.sample("nxdns_udp_in_flight", label("family", "ipv4"), static_cast<std::uint64_t>(ls.v4.udp_in_flight));
  d.sample("nxdns_udp_in_flight", label("family", "ipv6"), static_cast<std::uint64_t>(ls.v6.udp_in_flight));
  d.family("nxdns_tcp_accepted_total", "counter", "Client TCP connections accepted.");
  d.sample("nxdns_tcp_accepted_total", "", ls.tcp_accepted);
}

void render_cache(Doc& d, const cache::CacheStats& c) {
  const auto counter = [&d](const char* name, const char* help, std::uint64_t v) {
    d.family(name, "counter", help);
    d.sample(name, "", v);
  };
  const auto gauge = [&d](const char* name, const char* help, std::uint64_t v) {
    d.family(name, "gauge", help);
    d.sample(name, "", v);
  };
  counter("nxdns_cache_hits_total", "Client queries answered from a fresh cache entry.", c.hits);
  counter("nxdns_cache_misses_total", "Client queries that waited for an upstream exchange (started or joined).",
          c.misses);
  counter("nxdns_cache_stale_answers_total",
          "Stale answers sent (RFC 8767): the refresh failed or took longer than the client response timer.",
          c.stale_served);
  counter("nxdns_cache_stale_refreshes_skipped_total",
          "Stale answers sent at once, no refresh: the name's refresh failed within the recheck window (RFC 8767).",
          c.stale_refreshes_skipped);
  counter("nxdns_cache_prefetches_total", "Background refreshes started by a hit in the last part of a TTL.",
          c.prefetches);
  counter("nxdns_cache_dedup_joins_total", "Client queries that joined an identical exchange already in flight.",
          c.dedup_joins);
  counter("nxdns_cache_evictions_total", "Cache entries removed to stay within cache.max_bytes.", c.evictions);
  counter("nxdns_cache_flushed_total", "Cache entries removed by the operator (nxdns cache flush).", c.flushed);
  counter("nxdns_cache_stores_total", "Upstream answers stored in the cache.", c.stores);
  d.family("nxdns_cache_not_stored_total", "counter", "Upstream answers not cached, by reason.");
  constexpr cache::Verdict reasons[] = {cache::Verdict::truncated, cache::Verdict::error_rcode, cache::Verdict::ttl_zero,
                                        cache::Verdict::no_soa, cache::Verdict::malformed};
  for (cache::Verdict v : reasons) {
    d.sample("nxdns_cache_not_stored_total", label("reason", cache::describe(v)), c.not_stored[static_cast<std::size_t>(v)]);
  }
  gauge("nxdns_cache_entries", "Answers in the cache.", c.entries);
  gauge("nxdns_cache_bytes", "Bytes the cache holds, per-entry overhead included (bounded by cache.max_bytes).",
        c.bytes);
  gauge("nxdns_cache_max_bytes", "The configured cache.max_bytes.", c.max_bytes);
  gauge("nxdns_cache_exchanges_in_flight", "Upstream exchanges the cache is waiting for (client, prefetch, refresh).",
        c.flights);
}

void render_persist(Doc& d, const cache::PersistStats& p) {
  const auto gauge = [&d](const char* name, const char* help, std::uint64_t v) {
    d.family(name, "gauge", help);
    d.sample(name, "", v);
  };
  d.family("nxdns_cache_persist_load", "gauge",
           "What became of cache.persist_file at start: 1 for the outcome, 0 for the others.");
  constexpr cache::LoadResult results[] = {cache::LoadResult::loaded, cache::LoadResult::missing,
                                           cache::LoadResult::rejected, cache::LoadResult::unreadable};
  for (cache::LoadResult r : results) {
    d.sample("nxdns_cache_persist_load", label("result", cache::describe(r)), std::uint64_t{p.load == r ? 1u : 0u});
  }
  gauge("nxdns_cache_persist_loaded_entries", "Answers put back into the cache from cache.persist_file at start.",
        p.loaded_entries);
  gauge("nxdns_cache_persist_skipped_entries",
        "Entries of the cache file not loaded at start: past their stale window, refused by a check, or over max_bytes.",
        p.skipped_entries);
  d.family("nxdns_cache_persist_load_seconds", "gauge", "Time spent reading, checking and storing the cache file at start.");
  d.sample_d("nxdns_cache_persist_load_seconds", "", p.load_seconds);
  gauge("nxdns_cache_persist_loaded_stale_only",
        "1 when the clock was behind the cache file's time at start: every loaded answer was stale.",
        p.loaded_stale_only ? 1 : 0);
  d.family("nxdns_cache_persist_saves_total", "counter", "Cache file saves that completed.");
  d.sample("nxdns_cache_persist_saves_total", "", p.saves);
  d.family("nxdns_cache_persist_save_failures_total", "counter",
           "Cache file saves that failed (the file before stays intact).");
  d.sample("nxdns_cache_persist_save_failures_total", "", p.save_failures);
  d.family("nxdns_cache_persist_last_save_timestamp_seconds", "gauge",
           "Unix time of the last completed save, by this host's clock; 0 before the first.");
  d.sample("nxdns_cache_persist_last_save_timestamp_seconds", "",
           static_cast<std::uint64_t>(p.last_save_unix && *p.last_save_unix > 0 ? *p.last_save_unix : 0));
  gauge("nxdns_cache_persist_last_save_bytes", "Size of the cache file the last completed save wrote.",
        p.last_save_bytes);
  d.family("nxdns_cache_persist_last_save_seconds", "gauge",
           "Time the last completed save took: copying the entries (on the loop) and writing them (checksum, write, "
           "fsync; on a worker thread except at shutdown).");
  d.sample_d("nxdns_cache_persist_last_save_seconds", label("part", "copy"), p.last_save_copy_seconds);
  d.sample_d("nxdns_cache_persist_last_save_seconds", label("part", "write"), p.last_save_write_seconds);
}

void render_process(Doc& d, const MetricsInput& in) {
  d.family("nxdns_diagnostics_episodes_total", "counter",
           "Diagnostics episodes opened (a run of failed attempts against one upstream).");
  d.sample("nxdns_diagnostics_episodes_total", "", in.episodes_opened_total);
  d.family("nxdns_diagnostics_open_episodes", "gauge", "Diagnostics episodes still open (upstreams failing now).");
  d.sample("nxdns_diagnostics_open_episodes", "", static_cast<std::uint64_t>(in.episodes_open));

  const auto& b = in.build;
  d.family("nxdns_build_info", "gauge", "Version of nxdns and of the libraries it runs with. Always 1.");
  d.sample("nxdns_build_info",
           join(join(join(label("version", b.version), label("mbedtls", b.mbedtls)),
                     join(label("curl", b.curl), label("libevent", b.libevent))),
                label("microhttpd", b.microhttpd)),
           std::string("1"));
  d.family("nxdns_uptime_seconds", "gauge", "Seconds since the daemon started serving.");
  d.sample_d("nxdns_uptime_seconds", "", in.uptime_seconds);
}

}  // namespace

std::string escape_label_value(std::string_view v) {
  std::string o;
  o.reserve(v.size());
  for (char c : v) {
    if (c == '\\') o += "\\\\";
    else if (c == '"') o += "\\\"";
    else if (c == '\n') o += "\\n";
    else o.push_back(c);
  }
  return o;
}

std::string format_sample(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return format_double(v);
}

const char* rcode_name(unsigned rcode) {
  return rcode_names[query::rcode_bucket(static_cast<std::uint16_t>(rcode > 0xFFF ? 0xFFF : rcode))];
}

BuildInfo build_info() {
  BuildInfo b;
  b.version = nxdns::version;
  char mbed[32] = {};
  mbedtls_version_get_string(mbed);
  b.mbedtls = mbed;
  // libcurl is mapped only when a DoH upstream is configured (see
  // upstream/curl_library.hpp); otherwise there is no curl version to report.
  if (upstream::curl_library_loaded()) b.curl = upstream::curl_lib().version();
  b.libevent = event_get_version();
  b.microhttpd = MHD_get_version();
  return b;
}

// The routing step: where queries went, and what is answered here.
void render_routes(Doc& d, const MetricsInput& in) {
  d.family("nxdns_routed_queries_total", "counter",
           "Client queries by the route decided for them: records (hosts files, records), negative (a zone answered "
           "here), loopback (localhost), lan (a LAN server), upstream (the encrypted upstreams).");
  for (std::size_t k = 0; k < route::route_kind_count; ++k) {
    d.sample("nxdns_routed_queries_total", label("route", route::describe(static_cast<route::RouteKind>(k))),
             in.queries.routed[k]);
  }
  d.family("nxdns_lan_fallbacks_total", "counter",
           "LAN queries answered with their zone's local negative answer because the LAN server could not answer.");
  d.sample("nxdns_lan_fallbacks_total", "", in.queries.lan_fallbacks);
  if (in.local) {
    d.family("nxdns_local_records", "gauge", "Records answered here (hosts files, records, built-in).");
    d.sample("nxdns_local_records", "", static_cast<std::uint64_t>(in.local->records));
  }
  if (!in.blocking || !in.blocking->enabled) return;
  const BlockingStatus& b = *in.blocking;
  d.family("nxdns_blocked_queries_total", "counter", "Queries answered as blocked, by the list whose rule blocked them.");
  for (const auto& l : b.lists) {
    if (!l.allow_list) d.sample("nxdns_blocked_queries_total", label("list", l.name), l.blocked);
  }
  d.family("nxdns_blocklist_rules", "gauge", "Rules each list gives the table in use (allow rules included).");
  for (const auto& l : b.lists) d.sample("nxdns_blocklist_rules", label("list", l.name), l.rules);
  d.family("nxdns_blocklist_loaded_timestamp_seconds", "gauge",
           "When the table holding each list was built (Unix time): a URL list's last successful refresh or reload.");
  for (const auto& l : b.lists) {
    if (l.loaded_unix) {
      d.sample("nxdns_blocklist_loaded_timestamp_seconds", label("list", l.name), static_cast<std::uint64_t>(*l.loaded_unix));
    }
  }
  d.family("nxdns_blocklist_load_failures_total", "counter",
           "Loads of the lists that failed (a list could not be read); the previous table stayed in use.");
  d.sample("nxdns_blocklist_load_failures_total", "", b.build_failures);
  d.family("nxdns_blocklist_fetch_failures_total", "counter",
           "URL lists: fetches that failed (network, TLS, HTTP status, size cap, a cut body); the previous copy stayed.");
  for (const auto& l : b.lists) {
    if (l.url) d.sample("nxdns_blocklist_fetch_failures_total", label("list", l.name), l.fetch_failures);
  }
  d.family("nxdns_blocklist_memory_bytes", "gauge", "Memory of the blocklist table in use.");
  d.sample("nxdns_blocklist_memory_bytes", "", static_cast<std::uint64_t>(b.memory_bytes));
  d.family("nxdns_blocklist_allowed_total", "counter", "Queries whose name an allow rule covers.");
  d.sample("nxdns_blocklist_allowed_total", "", b.allowed_by_rule);
}

std::string render_metrics(const MetricsInput& in) {
  std::vector<const EntrySnapshot*> ups;
  ups.reserve(in.upstreams.size());
  for (const auto& s : in.upstreams) ups.push_back(&s);
  std::stable_sort(ups.begin(), ups.end(), [](const EntrySnapshot* a, const EntrySnapshot* b) { return a->index < b->index; });
  // The LAN servers take the same per-upstream series, after the upstreams;
  // a server named by two groups is shown once.
  std::vector<std::string> seen;
  if (in.local) {
    for (const auto& g : in.local->lan) {
      for (const auto& s : g.servers) {
        if (std::find(seen.begin(), seen.end(), s.label) != seen.end()) continue;
        seen.push_back(s.label);
        ups.push_back(&s);
      }
    }
  }
  Doc d;
  render_upstreams(d, ups);
  render_listeners(d, in);
  render_routes(d, in);
  if (in.cache) render_cache(d, *in.cache);
  if (in.persist) render_persist(d, *in.persist);
  render_process(d, in);
  return d.take();
}

}  // namespace nxdns::web
