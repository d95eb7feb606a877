#include "web/surface.hpp"

#include <memory>

#include "web/embedded_files.hpp"
#include "web/history_sampler.hpp"
#include "web/json.hpp"
#include "web/metrics.hpp"
#include "web/page_summary.hpp"
#include "web/status.hpp"

namespace nxdns::web {

namespace {

// What the handlers share: the sources, the build info (library versions do
// not change while the process runs) and the history ring with its timer.
struct Surface {
  Sources src;
  BuildInfo build;
  std::unique_ptr<HistorySampler> history;

  double uptime() const { return std::chrono::duration<double>(src.sched->now() - src.started_at).count(); }

  HealthInput health() const {
    HealthInput in;
    in.version = build.version;
    in.uptime_seconds = uptime();
    in.upstreams = src.pool->snapshot();
    // The live listener set: a reload may have opened or closed some.
    in.udp = src.udp_now ? src.udp_now() : src.udp;
    in.tcp = src.tcp_now ? src.tcp_now() : src.tcp;
    in.queries_in_flight = src.engine->in_flight();
    in.queries = src.engine->counters();
    in.listeners = *src.listeners;
    in.open_episodes = src.diagnostics->open_count();
    if (src.cache) in.cache = src.cache->stats();
    if (src.persist) in.persist = src.persist->stats();
    if (src.local_now) in.local = src.local_now();
    if (src.blocking_now) in.blocking = src.blocking_now();
    return in;
  }

  PageInput page() const { return PageInput{health(), src.diagnostics->episodes(), src.sched->now()}; }

  HistoryReading reading() const {
    HistoryReading r;
    r.at = src.sched->now();
    for (const auto& by_rc : src.engine->counters().replies_by_rcode) {
      for (std::uint64_t n : by_rc) r.replies += n;
    }
    for (const auto& e : src.pool->snapshot()) {
      r.exchanges += e.latency.count();
      r.exchange_seconds += e.latency.sum_seconds();
      r.queued += e.queued_total;
      r.queue_depth += e.queue_depth;
      r.in_flight += e.in_flight;
    }
    return r;
  }
};

Response static_file(std::string_view name, const char* type) {
  Response resp;
  resp.content_type = type;
  resp.body = std::string(embedded_file(name).value_or(""));
  resp.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return resp;
}

// Headers of the page and of its fragment: the CSP, and no framing or
// referrer leaks (the page links to the API only).
void page_headers(Response& r) {
  r.headers.emplace_back("Content-Security-Policy", page_csp);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("X-Frame-Options", "DENY");
}

}  // namespace

Routes daemon_routes(Sources src) {
  auto s = std::make_shared<Surface>();
  s->src = std::move(src);
  s->build = build_info();
  Surface* raw = s.get();
  s->history = std::make_unique<HistorySampler>(*s->src.sched, [raw] { return raw->reading(); });

  Routes r;
  r["/"] = [s] {
    Response resp;
    resp.content_type = "text/html; charset=utf-8";
    resp.body = render_page(embedded_file("page/index.html").value_or(""), s->page());
    page_headers(resp);
    return resp;
  };
  r["/summary"] = [s] {
    Response resp;
    resp.content_type = "text/html; charset=utf-8";
    resp.body = render_summary(s->page());
    page_headers(resp);
    return resp;
  };
  r["/page.css"] = [] { return static_file("page/page.css", "text/css; charset=utf-8"); };
  r["/page.js"] = [] { return static_file("page/page.js", "text/javascript; charset=utf-8"); };
  r["/favicon.svg"] = [] { return static_file("page/favicon.svg", "image/svg+xml"); };
  r["/api/openapi.json"] = [] { return static_file("openapi.json", json_content_type); };
  r["/metrics"] = [s] {
    MetricsInput in;
    in.upstreams = s->src.pool->snapshot();
    in.queries = s->src.engine->counters();
    in.queries_in_flight = s->src.engine->in_flight();
    in.listeners = *s->src.listeners;
    in.build = s->build;
    in.uptime_seconds = s->uptime();
    in.episodes_opened_total = s->src.diagnostics->opened_total();
    in.episodes_open = s->src.diagnostics->open_count();
    if (s->src.cache) in.cache = s->src.cache->stats();
    if (s->src.persist) in.persist = s->src.persist->stats();
    if (s->src.local_now) in.local = s->src.local_now();
    if (s->src.blocking_now) in.blocking = s->src.blocking_now();
    Response resp;
    resp.content_type = metrics_content_type;
    resp.body = render_metrics(in);
    return resp;
  };
  r["/api/health"] = [s] {
    HealthInput in = s->health();
    Response resp;
    resp.status = http_status_for(overall_status(in.upstreams));
    resp.content_type = json_content_type;
    resp.body = render_health(in);
    return resp;
  };
  r["/api/diagnostics"] = [s] {
    Response resp;
    resp.content_type = json_content_type;
    resp.body = render_diagnostics(s->src.diagnostics->episodes(), s->src.diagnostics->capacity(), s->src.sched->now());
    return resp;
  };
  // GET /api/why?name=NAME[&type=T][&client=IP]: how the name would be
  // routed (`nxdns why`). Read-only, like /api/health.
  r["/api/why"] = [s](const std::map<std::string, std::string>& args) {
    Response resp;
    resp.content_type = json_content_type;
    auto bad = [&resp](const std::string& why) {
      resp.status = 400;
      JsonWriter w;
      w.begin_object();
      w.key("error").value(why);
      w.end_object();
      resp.body = w.take();
      return resp;
    };
    WhyInput in;
    const auto name = args.find("name");
    if (name == args.end() || name->second.empty()) return bad("name is required (?name=NAME)");
    in.name = name->second;
    const auto wire = dns::name_from_text(in.name);
    if (!wire) return bad("not a valid domain name");
    if (auto t = args.find("type"); t != args.end()) {
      auto q = route::qtype_from_text(t->second);
      if (!q) return bad("not a query type (A, AAAA, MX, TYPE65, ...)");
      in.qtype = *q;
    }
    std::optional<net::Endpoint> client;
    if (auto c = args.find("client"); c != args.end() && !c->second.empty()) {
      client = net::make_endpoint(c->second, 0);
      if (!client) return bad("client must be an IP address");
      in.client = client->host_string();
      in.client_refused = s->src.listeners->access.decide(client->sa()) == server::Access::refuse;
    }
    const auto& table = s->src.engine->routes();
    const auto& blocking = s->src.engine->blocking();
    if (blocking.table) {
      in.blocking_applies = !blocking.groups || blocking.groups->applies(client ? client->sa() : nullptr);
      in.blocking = blocking.table->why(*wire);
    }
    if (table) {
      const route::Route r = s->src.engine->route_for(*wire, in.qtype, client ? client->sa() : nullptr);
      in.explanation = route::explain(*table, r);
      if (r.kind == route::RouteKind::blocked && r.block.list < blocking.table->lists().size()) {
        in.explanation.source = blocking.table->lists()[r.block.list].name + ":" + std::to_string(r.block.line);
        in.explanation.answer = describe_blocked(blocking.answer);
      }
    } else {
      in.explanation.route = "upstream";
      in.explanation.answer = "sent to the encrypted upstreams (through the cache)";
    }
    if (auto f = args.find("format"); f != args.end() && f->second == "text") {
      resp.content_type = "text/plain; charset=utf-8";
      resp.body = render_why_text(in);
    } else {
      resp.body = render_why(in);
    }
    return resp;
  };
  r["/api/history"] = [s] {
    Response resp;
    resp.content_type = json_content_type;
    resp.body = render_history(s->history->ring(), s->src.sched->now() - s->history->last_sample_at());
    return resp;
  };
  return r;
}
PostRoutes daemon_post_routes(cache::CachingPool* cache, std::function<std::size_t(const std::string* name)> also) {
  PostRoutes r;
  r["/api/cache/flush"] = [cache, also](const std::map<std::string, std::string>& args) {
    Response resp;
    resp.content_type = json_content_type;
    JsonWriter w;
    w.begin_object();
    if (!cache) {
      resp.status = 409;
      w.key("error").value("the cache is disabled (cache.enabled: false)");
    } else if (auto name = args.find("name"); name != args.end()) {
      auto n = cache->flush_name(name->second);
      if (!n) {
        resp.status = 400;
        w.key("error").value("not a valid domain name");
      } else {
        w.key("name").value(name->second);
        w.key("flushed").value(static_cast<std::uint64_t>(*n + (also ? also(&name->second) : 0)));
      }
    } else {
      w.key("flushed").value(static_cast<std::uint64_t>(cache->flush_all() + (also ? also(nullptr) : 0)));
    }
    w.end_object();
    resp.body = w.take();
    return resp;
  };
  return r;
}

}  // namespace nxdns::web
