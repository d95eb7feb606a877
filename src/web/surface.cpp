#include "web/surface.hpp"

#include <memory>

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

}  // namespace nxdns::web
