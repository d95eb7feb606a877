#include "web/page_summary.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>

#include "web/json.hpp"
#include "web/metrics.hpp"

namespace nxdns::web {

namespace {

double seconds(loop::Duration d) { return std::chrono::duration<double>(d).count(); }
// A data-value as the JSON documents write it (rounded to milliseconds), so
// the page and the API agree digit for digit.
std::string ms_value(double s) { return format_double(round_to_ms(s)); }

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string duration_text(double s) {
  if (s < 60) return fixed(s, s < 10 ? 1 : 0) + " s";
  const auto total = static_cast<long long>(s);
  if (total < 3600) return std::to_string(total / 60) + " min " + std::to_string(total % 60) + " s";
  if (total < 86400) return std::to_string(total / 3600) + " h " + std::to_string(total % 3600 / 60) + " min";
  return std::to_string(total / 86400) + " d " + std::to_string(total % 86400 / 3600) + " h";
}

// A Unix time as the page shows it: UTC, to the second (the page cannot
// know the reader's zone, and the journal's times are UTC too).
std::string utc_text(std::int64_t unix) {
  const auto t = static_cast<time_t>(unix);
  tm parts{};
  char buf[32] = "?";
  if (::gmtime_r(&t, &parts)) std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &parts);
  return buf;
}

std::string bytes_text(std::uint64_t b) {
  if (b < 1024) return std::to_string(b) + " B";
  if (b < 1024 * 1024) return fixed(static_cast<double>(b) / 1024.0, 1) + " KiB";
  return fixed(static_cast<double>(b) / (1024.0 * 1024.0), 1) + " MiB";
}

// Writes HTML. Element helpers keep every figure's data-field and
// data-value consistent, which is what the browser tests read.
class Html {
 public:
  Html& raw(std::string_view s) {
    out_ += s;
    return *this;
  }
  Html& text(std::string_view s) {
    out_ += html_escape(s);
    return *this;
  }
  // <tag class=... data-field=field data-value=value>shown</tag>
  Html& figure(std::string_view tag, std::string_view field, const std::string& value, std::string_view shown,
               std::string_view cls = {}) {
    raw("<").raw(tag);
    if (!cls.empty()) raw(" class=\"").text(cls).raw("\"");
    raw(" data-field=\"").text(field).raw("\"");
    if (!value.empty()) raw(" data-value=\"").text(value).raw("\"");
    raw(">").text(shown).raw("</").raw(tag).raw(">");
    return *this;
  }
  Html& number(std::string_view tag, std::string_view field, std::uint64_t v) {
    return figure(tag, field, std::to_string(v), std::to_string(v));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string up_field(std::size_t index, std::string_view name) {
  return "upstreams." + std::to_string(index) + "." + std::string(name);
}

// One <td> with the column name for the narrow layout (page.css shows
// data-label before the value when the table becomes a list of cards).
void cell_open(Html& h, std::string_view label) { h.raw("<td data-label=\"").text(label).raw("\">"); }

void status_line(Html& h, const HealthInput& in) {
  const Status st = overall_status(in.upstreams);
  std::size_t healthy = 0;
  for (const auto& u : in.upstreams) healthy += u.health == upstream::HealthState::healthy ? 1 : 0;
  h.raw("<section class=\"overall\" aria-labelledby=\"overall-h\"><h2 id=\"overall-h\">Status</h2><p>");
  h.figure("strong", "status", "", describe(st), std::string("badge badge-") + describe(st));
  h.raw(" <span>");
  switch (st) {
    case Status::ok: h.text(std::to_string(healthy) + " of " + std::to_string(in.upstreams.size()) + " upstreams healthy; queries are being answered."); break;
    case Status::degraded: h.text("No upstream is healthy; queries are still being tried."); break;
    case Status::down: h.text("Every upstream is in backoff: answers are failing."); break;
  }
  h.raw("</span></p><p class=\"meta\">nxdns ").text(in.version).raw(", up ");
  h.figure("span", "uptime_seconds", ms_value(in.uptime_seconds), duration_text(in.uptime_seconds));
  h.raw(", ").number("span", "open_episodes", in.open_episodes).raw(" open diagnostics episodes.</p></section>");
}

void upstream_table(Html& h, const HealthInput& in) {
  std::vector<const upstream::EntrySnapshot*> ups;
  for (const auto& s : in.upstreams) ups.push_back(&s);
  std::stable_sort(ups.begin(), ups.end(), [](auto* a, auto* b) { return a->index < b->index; });
  h.raw("<section aria-labelledby=\"up-h\"><h2 id=\"up-h\">Upstreams</h2>");
  h.raw("<table class=\"cards\"><caption>Upstreams in configuration order; latency since start</caption><thead><tr>");
  for (const char* c : {"#", "Kind", "URL", "Priority", "State", "Sessions / slots", "In flight", "Queue", "Queued",
                        "TLS", "Handshakes resumed / full", "Reuse recoveries", "Latency p50", "Latency p95"}) {
    h.raw("<th scope=\"col\">").text(c).raw("</th>");
  }
  h.raw("</tr></thead><tbody>");
  for (const auto* s : ups) {
    const std::size_t i = s->index;
    h.raw("<tr>");
    h.raw("<th scope=\"row\" data-label=\"#\">").number("span", up_field(i, "upstream"), i).raw("</th>");
    cell_open(h, "Kind");
    h.figure("span", up_field(i, "kind"), "", s->kind).raw("</td>");
    cell_open(h, "URL");
    h.figure("span", up_field(i, "url"), "", s->label, "url").raw("</td>");
    cell_open(h, "Priority");
    h.figure("span", up_field(i, "priority"), std::to_string(s->priority), std::to_string(s->priority)).raw("</td>");
    cell_open(h, "State");
    h.figure("span", up_field(i, "state"), "", upstream::describe(s->health),
             std::string("state state-") + upstream::describe(s->health));
    if (s->health == upstream::HealthState::backoff) {
      const double left = std::max(0.0, seconds(s->backoff_remaining));
      h.raw(" <span class=\"detail\">backoff ")
          .figure("span", up_field(i, "backoff_until_seconds"), ms_value(left), fixed(left, 1))
          .raw(" s</span>");
    }
    if (s->consecutive_failures != 0) {
      h.raw(" <span class=\"detail\">").number("span", up_field(i, "consecutive_failures"), s->consecutive_failures);
      h.raw(" failures in a row");
      if (s->last_failure != upstream::Cause::ok) {
        h.raw(", last ").figure("span", up_field(i, "last_failure"), "", upstream::describe(s->last_failure));
      }
      h.raw("</span>");
    }
    h.raw("</td>");
    cell_open(h, "Sessions / slots");
    h.number("span", up_field(i, "open_sessions"), s->transport.open_sessions).raw(" / ");
    h.number("span", up_field(i, "slots"), s->slots).raw("</td>");
    cell_open(h, "In flight");
    h.number("span", up_field(i, "in_flight"), s->in_flight).raw("</td>");
    cell_open(h, "Queue");
    h.number("span", up_field(i, "queue_depth"), s->queue_depth).raw("</td>");
    cell_open(h, "Queued");
    h.number("span", up_field(i, "queued_total"), s->queued_total).raw("</td>");
    cell_open(h, "TLS");
    h.figure("span", up_field(i, "tls_version"), "", s->transport.tls_version.empty() ? "–" : s->transport.tls_version)
        .raw("</td>");
    cell_open(h, "Handshakes resumed / full");
    if (s->kind == "dot") {
      h.number("span", up_field(i, "tls_handshakes.resumed"), s->transport.handshakes.resumed).raw(" / ");
      h.number("span", up_field(i, "tls_handshakes.full"), s->transport.handshakes.full);
    } else {
      h.raw("<span title=\"curl's handshakes are not seen by the daemon\">–</span>");
    }
    h.raw("</td>");
    cell_open(h, "Reuse recoveries");
    h.number("span", up_field(i, "reuse_recoveries"), s->transport.reuse_recoveries).raw("</td>");
    for (auto [label, name, q] : {std::tuple{"Latency p50", "latency.p50_seconds", 0.5},
                                  std::tuple{"Latency p95", "latency.p95_seconds", 0.95}}) {
      cell_open(h, label);
      if (auto v = s->latency.quantile(q)) {
        h.figure("span", up_field(i, name), ms_value(*v), fixed(*v * 1000.0, 1) + " ms");
      } else {
        h.figure("span", up_field(i, name), "", "–");
      }
      h.raw("</td>");
    }
    h.raw("</tr>");
  }
  h.raw("</tbody></table></section>");
}

void listener_tables(Html& h, const HealthInput& in) {
  const auto& ls = in.listeners;
  h.raw("<section aria-labelledby=\"ls-h\"><h2 id=\"ls-h\">Listeners</h2><p>");
  h.number("span", "listeners.queries_in_flight", in.queries_in_flight).raw(" queries in flight; UDP in flight ");
  h.number("span", "listeners.udp_in_flight.ipv4", ls.v4.udp_in_flight).raw(" (IPv4) + ");
  h.number("span", "listeners.udp_in_flight.ipv6", ls.v6.udp_in_flight).raw(" (IPv6) of ");
  h.number("span", "listeners.udp_in_flight_cap", server::udp_in_flight_cap).raw(" each; TCP connections ");
  h.number("span", "listeners.tcp_connections.ipv4", ls.v4.tcp_connections).raw(" + ");
  h.number("span", "listeners.tcp_connections.ipv6", ls.v6.tcp_connections).raw(" of ");
  h.number("span", "listeners.tcp_connection_cap", server::tcp_connection_cap).raw(" each.</p>");

  std::set<std::size_t> seen;
  for (const auto& by_rc : in.queries.replies_by_rcode) {
    for (std::size_t rc = 0; rc < by_rc.size(); ++rc) {
      if (by_rc[rc] != 0) seen.insert(rc);
    }
  }
  h.raw("<table><caption>Replies by response code since start</caption><thead><tr><th scope=\"col\">Code</th>"
        "<th scope=\"col\">UDP</th><th scope=\"col\">TCP</th></tr></thead><tbody>");
  if (seen.empty()) h.raw("<tr><td colspan=\"3\">No replies yet.</td></tr>");
  for (std::size_t rc : seen) {
    const char* name = rcode_name(static_cast<unsigned>(rc));
    h.raw("<tr><th scope=\"row\">").text(name).raw("</th>");
    for (std::size_t p = 0; p < 2; ++p) {
      h.raw("<td>").number("span", std::string("listeners.replies.") + query::describe(static_cast<query::Protocol>(p)) +
                                       "." + name,
                           in.queries.replies_by_rcode[p][rc]);
      h.raw("</td>");
    }
    h.raw("</tr>");
  }
  h.raw("</tbody></table>");

  h.raw("<table><caption>Rejections by reason since start</caption><thead><tr><th scope=\"col\">Reason</th>"
        "<th scope=\"col\">Count</th></tr></thead><tbody>");
  bool any = false;
  for (std::size_t r = 0; r < server::rejection_count; ++r) {
    if (ls.rejections[r] == 0) continue;
    any = true;
    const char* name = server::describe(static_cast<server::Rejection>(r));
    h.raw("<tr><th scope=\"row\">").text(name).raw("</th><td>");
    h.number("span", std::string("listeners.rejections.") + name, ls.rejections[r]).raw("</td></tr>");
  }
  if (!any) h.raw("<tr><td colspan=\"2\">No rejections.</td></tr>");
  h.raw("</tbody></table></section>");
}

void cache_section(Html& h, const HealthInput& in) {
  h.raw("<section aria-labelledby=\"cache-h\"><h2 id=\"cache-h\">Cache</h2>");
  if (!in.cache) {
    h.raw("<p data-field=\"cache.enabled\" data-value=\"false\">The cache is disabled (cache.enabled: false).</p></section>");
    return;
  }
  const cache::CacheStats& c = *in.cache;
  h.raw("<dl class=\"figures\"><div><dt>Hit ratio</dt><dd>");
  if (c.hits + c.misses == 0) {
    h.figure("span", "cache.hit_ratio", "", "–");
  } else {
    const double r = static_cast<double>(c.hits) / static_cast<double>(c.hits + c.misses);
    h.figure("span", "cache.hit_ratio", ms_value(r), fixed(r * 100.0, 1) + " %");
  }
  h.raw(" (").number("span", "cache.hits", c.hits).raw(" hits, ").number("span", "cache.misses", c.misses);
  h.raw(" misses)</dd></div><div><dt>Entries</dt><dd>").number("span", "cache.entries", c.entries);
  h.raw("</dd></div><div><dt>Bytes</dt><dd>")
      .figure("span", "cache.bytes", std::to_string(c.bytes), bytes_text(c.bytes))
      .raw(" of ")
      .figure("span", "cache.max_bytes", std::to_string(c.max_bytes), bytes_text(c.max_bytes));
  h.raw("</dd></div><div><dt>Stale answers</dt><dd>").number("span", "cache.stale_answers", c.stale_served);
  if (in.persist) {
    const cache::PersistStats& p = *in.persist;
    h.raw("</dd></div><div><dt>Last saved</dt><dd>");
    if (p.last_save_unix) {
      h.figure("span", "cache.persist.last_save_unix", std::to_string(*p.last_save_unix), utc_text(*p.last_save_unix))
          .raw(" (")
          .figure("span", "cache.persist.last_save_bytes", std::to_string(p.last_save_bytes),
                  bytes_text(p.last_save_bytes))
          .raw(")");
    } else {
      h.figure("span", "cache.persist.last_save_unix", "", "not since start");
    }
    if (p.save_failures != 0) {
      h.raw("; ").number("span", "cache.persist.save_failures", p.save_failures).raw(" failed");
    }
    h.raw("</dd></div><div><dt>Loaded at start</dt><dd>")
        .number("span", "cache.persist.loaded_entries", p.loaded_entries)
        .raw(" answers (")
        .figure("span", "cache.persist.load", "", cache::describe(p.load))
        .raw(p.loaded_stale_only ? "; stale only: the clock was behind the file)" : ")");
  }
  h.raw("</dd></div></dl></section>");
}

void episode_table(Html& h, const std::vector<diag::Episode>& eps, loop::TimePoint now) {
  h.raw("<section aria-labelledby=\"ep-h\"><h2 id=\"ep-h\">Recent diagnostics episodes</h2>");
  if (eps.empty()) {
    h.raw("<p data-field=\"episodes.count\" data-value=\"0\">No upstream failures since start.</p></section>");
    return;
  }
  h.raw("<table class=\"cards\"><caption>Failure runs against one upstream, newest first</caption><thead><tr>");
  for (const char* c : {"Started (UTC)", "Upstream", "State", "Duration", "Failures", "First cause", "Last cause"}) {
    h.raw("<th scope=\"col\">").text(c).raw("</th>");
  }
  h.raw("</tr></thead><tbody>");
  for (std::size_t k = 0; k < eps.size(); ++k) {
    const auto& e = eps[k];
    const std::string f = "episodes." + std::to_string(k) + ".";
    const double ago = seconds(now - e.started);
    const double dur = seconds((e.open ? now : e.ended) - e.started);
    h.raw("<tr>");
    h.raw("<th scope=\"row\" data-label=\"Started (UTC)\">")
        .figure("time", f + "started_at", "", diag::format_utc(e.started_wall))
        .raw(" <span class=\"detail\">")
        .figure("span", f + "started_seconds_ago", ms_value(ago), duration_text(ago))
        .raw(" ago</span></th>");
    cell_open(h, "Upstream");
    h.number("span", f + "upstream", e.upstream).raw(" ").figure("span", f + "url", "", e.url, "url").raw("</td>");
    cell_open(h, "State");
    h.figure("span", f + "open", e.open ? "true" : "false", e.open ? "open" : "closed",
             e.open ? "state state-failing" : "state");
    h.raw("</td>");
    cell_open(h, "Duration");
    h.figure("span", f + "duration_seconds", ms_value(dur), duration_text(dur)).raw("</td>");
    cell_open(h, "Failures");
    h.number("span", f + "failures", e.failures).raw("</td>");
    cell_open(h, "First cause");
    h.figure("span", f + "first_cause", "", upstream::describe(e.first_cause));
    if (!e.first_detail.empty()) h.raw(" <span class=\"detail\">").text(e.first_detail).raw("</span>");
    h.raw("</td>");
    cell_open(h, "Last cause");
    h.figure("span", f + "last_cause", "", upstream::describe(e.last_cause));
    if (!e.last_detail.empty()) h.raw(" <span class=\"detail\">").text(e.last_detail).raw("</span>");
    h.raw("</td></tr>");
  }
  h.raw("</tbody></table></section>");
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o.push_back(c);
    }
  }
  return o;
}

// Which router serves the LAN's names, whether it does, and where the
// queries went (the routing step).
void local_names_section(Html& h, const HealthInput& in) {
  if (!in.local) return;
  const LocalNamesStatus& l = *in.local;
  h.raw("<section aria-labelledby=\"local-h\"><h2 id=\"local-h\">Local names</h2><dl class=\"figures\">");
  h.raw("<div><dt>Home router</dt><dd>").figure("span", "local_names.home_router", "", l.home_router);
  for (const auto& g : l.lan) {
    if (!g.home_router) continue;
    for (const auto& e : g.servers) {
      if (serves_no_dns(e)) h.raw(" &mdash; <strong>does not serve DNS now; its names get their local answer</strong>");
    }
  }
  const auto& routed = in.queries.routed;
  auto at = [&routed](route::RouteKind k) { return routed[static_cast<std::size_t>(k)]; };
  const std::uint64_t here =
      at(route::RouteKind::records) + at(route::RouteKind::negative) + at(route::RouteKind::loopback);
  h.raw("</dd></div><div><dt>Answered here</dt><dd>").number("span", "local_names.answered_here", here);
  h.raw(" queries (").number("span", "local_names.records", l.records).raw(" records, ");
  h.number("span", "local_names.zones_answered_here", l.zones_answered_here).raw(" zones)");
  h.raw("</dd></div><div><dt>Sent to LAN servers</dt><dd>").number("span", "local_names.lan_queries", at(route::RouteKind::lan));
  h.raw(" queries</dd></div><div><dt>Sent upstream</dt><dd>").number("span", "local_names.upstream_queries", at(route::RouteKind::upstream));
  h.raw(" queries</dd></div></dl>");
  if (!l.lan.empty()) {
    h.raw("<table><thead><tr><th scope=\"col\">LAN server</th><th scope=\"col\">Zones</th><th scope=\"col\">State</th></tr></thead><tbody>");
    std::size_t i = 0;
    for (const auto& g : l.lan) {
      std::string zones;
      for (const auto& z : g.zones) zones += (zones.empty() ? "" : ", ") + z;
      for (const auto& e : g.servers) {
        const std::string f = "local_names.lan_servers." + std::to_string(i++);
        h.raw("<tr><td>").figure("span", f + ".url", "", e.label);
        if (g.home_router) h.raw(" (home router)");
        h.raw("</td><td>").text(zones);
        h.raw("</td><td>").figure("span", f + ".state", upstream::describe(e.health), upstream::describe(e.health));
        h.raw("</td></tr>");
      }
    }
    h.raw("</tbody></table>");
  }
  h.raw("</section>");
}

// Blocking: how much of the household's traffic it stops, and each list
// with its size and age.
void blocking_section(Html& h, const HealthInput& in) {
  if (!in.blocking || !in.blocking->enabled) return;
  const BlockingStatus& b = *in.blocking;
  std::uint64_t routed = 0;
  for (std::uint64_t n : in.queries.routed) routed += n;
  const std::uint64_t blocked = in.queries.routed[static_cast<std::size_t>(route::RouteKind::blocked)];
  h.raw("<section aria-labelledby=\"blocking-h\"><h2 id=\"blocking-h\">Blocking</h2><dl class=\"figures\">");
  h.raw("<div><dt>Blocked</dt><dd>");
  if (routed == 0) {
    h.raw("–");
  } else {
    h.text(fixed(static_cast<double>(blocked) / static_cast<double>(routed) * 100.0, 1) + " %");
  }
  h.raw(" of queries (").number("span", "blocking.blocked", blocked).raw(")</dd></div>");
  h.raw("<div><dt>Rules</dt><dd>").number("span", "blocking.rules", b.rules).raw(" (").text(bytes_text(b.memory_bytes)).raw(")");
  if (b.last_error) h.raw("; last load failed: ").figure("strong", "blocking.last_error", "", *b.last_error);
  h.raw("</dd></div></dl>");
  h.raw("<table><thead><tr><th scope=\"col\">List</th><th scope=\"col\">Rules</th><th scope=\"col\">Blocked</th>"
        "<th scope=\"col\">Loaded</th></tr></thead><tbody>");
  for (std::size_t i = 0; i < b.lists.size(); ++i) {
    const auto& l = b.lists[i];
    const std::string f = "blocking.lists." + std::to_string(i);
    h.raw("<tr><td>").figure("span", f + ".name", "", l.name);
    if (l.allow_list) h.raw(" (allow)");
    h.raw("</td><td>").number("span", f + ".rules", l.rules);
    h.raw("</td><td>").number("span", f + ".blocked", l.blocked);
    h.raw("</td><td>");
    h.text(l.loaded_unix ? utc_text(*l.loaded_unix) : (l.url ? "not fetched yet" : "–"));
    if (!l.fetch_error.empty()) h.raw("; last fetch failed: ").figure("strong", f + ".fetch_error", "", l.fetch_error);
    h.raw("</td></tr>");
  }
  h.raw("</tbody></table></section>");
}

std::string render_summary(const PageInput& in) {
  Html h;
  status_line(h, in.health);
  upstream_table(h, in.health);
  listener_tables(h, in.health);
  cache_section(h, in.health);
  local_names_section(h, in.health);
  blocking_section(h, in.health);
  episode_table(h, in.episodes, in.now);
  return h.take();
}

std::string render_page(std::string_view page_template, const PageInput& in) {
  constexpr std::string_view marker = "<!--nxdns:summary-->";
  constexpr std::string_view version_marker = "<!--nxdns:version-->";
  std::string out(page_template);
  if (auto at = out.find(version_marker); at != std::string::npos) {
    out.replace(at, version_marker.size(), html_escape(in.health.version));
  }
  if (auto at = out.find(marker); at != std::string::npos) out.replace(at, marker.size(), render_summary(in));
  return out;
}

}  // namespace nxdns::web
