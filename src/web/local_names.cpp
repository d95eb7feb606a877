#include "web/local_names.hpp"

namespace nxdns::web {

bool serves_no_dns(const upstream::EntrySnapshot& s) {
  using upstream::Cause;
  if (s.health == upstream::HealthState::healthy) return false;
  return s.last_failure == Cause::connect_failed || s.last_failure == Cause::attempt_timeout;
}

void write_local_names(JsonWriter& w, const LocalNamesStatus& s, const std::uint64_t* routed) {
  auto at = [routed](route::RouteKind k) { return routed[static_cast<std::size_t>(k)]; };
  w.begin_object();
  w.key("home_router").value(s.home_router);
  w.key("answered_here").value(at(route::RouteKind::records) + at(route::RouteKind::negative) +
                               at(route::RouteKind::loopback));
  w.key("lan_queries").value(at(route::RouteKind::lan));
  w.key("upstream_queries").value(at(route::RouteKind::upstream));
  w.key("lan_servers").begin_array();
  for (const auto& g : s.lan) {
    for (const auto& e : g.servers) {
      w.begin_object();
      w.key("url").value(e.label);
      w.key("home_router").value(g.home_router);
      w.key("state").value(upstream::describe(e.health));
      w.key("last_failure");
      if (e.last_failure == upstream::Cause::ok) {
        w.null();
      } else {
        w.value(upstream::describe(e.last_failure));
      }
      w.key("serves_dns").value(!serves_no_dns(e));
      w.key("zones").begin_array();
      for (const auto& z : g.zones) w.value(z);
      w.end_array();
      w.end_object();
    }
  }
  w.end_array();
  w.key("zones_answered_here").value(static_cast<std::uint64_t>(s.zones_answered_here));
  w.key("records").value(static_cast<std::uint64_t>(s.records));
  w.end_object();
}

std::string describe_blocked(route::BlockedAnswer a) {
  switch (a) {
    case route::BlockedAnswer::null: return "blocked: 0.0.0.0 / :: (NOERROR without data for other types), Extended DNS Error 15";
    case route::BlockedAnswer::refused: return "blocked: REFUSED, Extended DNS Error 15";
    case route::BlockedAnswer::nxdomain: break;
  }
  return "blocked: NXDOMAIN, Extended DNS Error 15";
}

std::string render_why(const WhyInput& in) {
  const route::Explanation& e = in.explanation;
  JsonWriter w;
  w.begin_object();
  w.key("name").value(in.name);
  w.key("type").value(route::qtype_to_text(in.qtype));
  w.key("client");
  if (in.client.empty()) {
    w.null();
  } else {
    w.value(in.client);
  }
  if (in.client_refused) {
    // access_control decides before any route: nothing below applies.
    w.key("route").value("refused");
    w.key("answer").value("REFUSED: access_control does not serve this client");
  } else {
    w.key("route").value(e.route);
    w.key("answer").value(e.answer);
  }
  w.key("zone");
  if (e.zone.empty()) {
    w.null();
  } else {
    w.value(e.zone);
  }
  w.key("source");
  if (e.source.empty()) {
    w.null();
  } else {
    w.value(e.source);
  }
  w.key("servers").begin_array();
  for (const auto& s : e.servers) w.value(s);
  w.end_array();
  w.key("records").begin_array();
  for (const auto& r : e.records) w.value(r);
  w.end_array();
  w.key("blocking");
  if (in.blocking.empty()) {
    w.null();
  } else {
    w.begin_object();
    w.key("applies").value(in.blocking_applies);
    w.key("lists").value(in.blocking);
    w.end_object();
  }
  w.end_object();
  return w.take();
}

std::string render_why_text(const WhyInput& in) {
  const route::Explanation& e = in.explanation;
  std::string out = in.name + " " + route::qtype_to_text(in.qtype);
  if (!in.client.empty()) out += " from " + in.client;
  out += "\n";
  if (in.client_refused) {
    return out + "  refused: access_control does not serve this client (REFUSED before any route)\n";
  }
  out += "  route:  " + e.route + "\n";
  out += "  answer: " + e.answer + "\n";
  if (!e.zone.empty()) out += "  zone:   " + e.zone + "\n";
  if (!e.source.empty()) out += "  why:    " + e.source + "\n";
  for (const auto& r : e.records) out += "  record: " + r + "\n";
  if (!in.blocking.empty()) {
    out += "  lists:  " + in.blocking + "\n";
    if (!in.blocking_applies) out += "          (blocking does not apply to this client: its group is not filtered)\n";
  }
  return out;
}

}  // namespace nxdns::web
