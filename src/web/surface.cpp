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
  r["/api/history"] = [s] {
    Response resp;
    resp.content_type = json_content_type;
    resp.body = render_history(s->history->ring(), s->src.sched->now() - s->history->last_sample_at());
    return resp;
  };
  return r;
}
PostRoutes daemon_post_routes(cache::CachingPool* cache) {
  PostRoutes r;
  r["/api/cache/flush"] = [cache](const std::map<std::string, std::string>& args) {
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
        w.key("flushed").value(static_cast<std::uint64_t>(*n));
      }
    } else {
      w.key("flushed").value(static_cast<std::uint64_t>(cache->flush_all()));
    }
    w.end_object();
    resp.body = w.take();
    return resp;
  };
  return r;
}

}  // namespace nxdns::web
