#include "web/surface.hpp"

#include <memory>

#include "web/json.hpp"
#include "web/metrics.hpp"
#include "web/status.hpp"

namespace nxdns::web {

Routes daemon_routes(Sources src) {
  // Shared by the handlers; the build info is read once (library versions
  // do not change while the process runs).
  auto s = std::make_shared<const Sources>(std::move(src));
  auto build = std::make_shared<const BuildInfo>(build_info());
  auto uptime = [s] { return std::chrono::duration<double>(s->sched->now() - s->started_at).count(); };

  Routes r;
  r["/metrics"] = [s, build, uptime] {
    MetricsInput in;
    in.upstreams = s->pool->snapshot();
    in.queries = s->engine->counters();
    in.queries_in_flight = s->engine->in_flight();
    in.listeners = *s->listeners;
    in.build = *build;
    in.uptime_seconds = uptime();
    in.episodes_opened_total = s->diagnostics->opened_total();
    in.episodes_open = s->diagnostics->open_count();
    if (s->cache) in.cache = s->cache->stats();
    Response resp;
    resp.content_type = metrics_content_type;
    resp.body = render_metrics(in);
    return resp;
  };
  r["/api/health"] = [s, build, uptime] {
    HealthInput in;
    in.version = build->version;
    in.uptime_seconds = uptime();
    in.upstreams = s->pool->snapshot();
    in.udp = s->udp;
    in.tcp = s->tcp;
    in.queries_in_flight = s->engine->in_flight();
    in.listeners = *s->listeners;
    in.open_episodes = s->diagnostics->open_count();
    if (s->cache) in.cache = s->cache->stats();
    Response resp;
    resp.status = http_status_for(overall_status(in.upstreams));
    resp.content_type = json_content_type;
    resp.body = render_health(in);
    return resp;
  };
  r["/api/diagnostics"] = [s] {
    Response resp;
    resp.content_type = json_content_type;
    resp.body = render_diagnostics(s->diagnostics->episodes(), s->diagnostics->capacity(), s->sched->now());
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
