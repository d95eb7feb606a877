// The routing step on the HTTP surface: /api/why's two forms, the
// local_names part of /api/health, the status page's "Local names" section
// and the route series of /metrics.
#include <string>

#include "route/explain.hpp"
#include "web/local_names.hpp"
#include "web/metrics.hpp"
#include "web/page_summary.hpp"
#include "web/status.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

namespace {
bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }
#define CHECK_CONTAINS(hay, needle) CHECK_TEXT(contains((hay), (needle)), (hay).c_str())

web::WhyInput why_records() {
  web::WhyInput in;
  in.name = "nas.home.arpa";
  in.qtype = 28;
  in.client = "192.168.1.23";
  in.explanation.route = "records";
  in.explanation.answer = "NOERROR from local records";
  in.explanation.zone = "home.arpa";
  in.explanation.source = "/etc/hosts:7";
  in.explanation.records = {"nas.home.arpa. 60 IN AAAA fd00::20  (/etc/hosts:7)"};
  return in;
}

upstream::EntrySnapshot router(upstream::HealthState h, upstream::Cause last) {
  upstream::EntrySnapshot s;
  s.label = "dns://192.168.1.1:53";
  s.kind = "dns";
  s.health = h;
  s.last_failure = last;
  return s;
}

web::LocalNamesStatus status_with(upstream::EntrySnapshot s) {
  web::LocalNamesStatus l;
  l.home_router = "192.168.1.1:53 (found: default gateway on eth0)";
  web::LanGroupStatus g;
  g.home_router = true;
  g.zones = {"home.arpa", "lan"};
  g.servers = {s};
  l.lan.push_back(g);
  l.zones_answered_here = 40;
  l.records = 3;
  return l;
}
}  // namespace

TEST_GROUP(LocalNamesSurface){};

TEST(LocalNamesSurface, WhyJsonCarriesEveryField) {
  const std::string j = web::render_why(why_records());
  CHECK_CONTAINS(j, "\"name\":\"nas.home.arpa\"");
  CHECK_CONTAINS(j, "\"type\":\"AAAA\"");
  CHECK_CONTAINS(j, "\"client\":\"192.168.1.23\"");
  CHECK_CONTAINS(j, "\"route\":\"records\"");
  CHECK_CONTAINS(j, "\"source\":\"/etc/hosts:7\"");
  CHECK_CONTAINS(j, "\"servers\":[]");
  CHECK_CONTAINS(j, "fd00::20  (/etc/hosts:7)");
}

TEST(LocalNamesSurface, WhyForARefusedClientSaysRefusedFirst) {
  auto in = why_records();
  in.client_refused = true;
  CHECK_CONTAINS(web::render_why(in), "\"route\":\"refused\"");
  const std::string t = web::render_why_text(in);
  CHECK_CONTAINS(t, "refused: access_control");
  CHECK_FALSE(contains(t, "route:"));
}

TEST(LocalNamesSurface, WhyTextIsAFewLines) {
  const std::string t = web::render_why_text(why_records());
  CHECK_CONTAINS(t, "nas.home.arpa AAAA from 192.168.1.23\n");
  CHECK_CONTAINS(t, "  route:  records\n");
  CHECK_CONTAINS(t, "  why:    /etc/hosts:7\n");
  CHECK_CONTAINS(t, "  record: nas.home.arpa. 60 IN AAAA fd00::20");
}

TEST(LocalNamesSurface, ARouterThatRefusesServesNoDns) {
  using upstream::Cause;
  using upstream::HealthState;
  CHECK_FALSE(web::serves_no_dns(router(HealthState::healthy, Cause::ok)));
  CHECK_TRUE(web::serves_no_dns(router(HealthState::backoff, Cause::connect_failed)));
  CHECK_TRUE(web::serves_no_dns(router(HealthState::failing, Cause::attempt_timeout)));
  // A bad answer is a router that serves DNS badly, not one without DNS.
  CHECK_FALSE(web::serves_no_dns(router(HealthState::failing, Cause::bad_response)));
}

TEST(LocalNamesSurface, HealthAndPageShowTheRouterAndItsState) {
  web::HealthInput h;
  h.local = status_with(router(upstream::HealthState::backoff, upstream::Cause::connect_failed));
  h.queries.routed[static_cast<std::size_t>(route::RouteKind::lan)] = 5;
  h.queries.routed[static_cast<std::size_t>(route::RouteKind::negative)] = 2;
  h.queries.routed[static_cast<std::size_t>(route::RouteKind::records)] = 3;
  const std::string j = web::render_health(h);
  CHECK_CONTAINS(j, "\"local_names\":{\"home_router\":\"192.168.1.1:53 (found: default gateway on eth0)\"");
  CHECK_CONTAINS(j, "\"serves_dns\":false");
  CHECK_CONTAINS(j, "\"zones\":[\"home.arpa\",\"lan\"]");
  web::PageInput p;
  p.health = h;
  const std::string page = web::render_summary(p);
  CHECK_CONTAINS(page, "Local names");
  CHECK_CONTAINS(page, "does not serve DNS now");
  CHECK_CONTAINS(page, "data-field=\"local_names.answered_here\" data-value=\"5\"");
  CHECK_CONTAINS(j, "\"answered_here\":5,\"lan_queries\":5");
  CHECK_CONTAINS(page, "data-field=\"local_names.lan_queries\" data-value=\"5\"");
  p.health.local = status_with(router(upstream::HealthState::healthy, upstream::Cause::ok));
  CHECK_FALSE(contains(web::render_summary(p), "does not serve DNS"));
}

TEST(LocalNamesSurface, MetricsCountRoutesAndLabelLanServers) {
  web::MetricsInput in;
  in.queries.routed[static_cast<std::size_t>(route::RouteKind::upstream)] = 11;
  in.queries.routed[static_cast<std::size_t>(route::RouteKind::lan)] = 7;
  in.queries.lan_fallbacks = 2;
  in.local = status_with(router(upstream::HealthState::healthy, upstream::Cause::ok));
  const std::string m = web::render_metrics(in);
  CHECK_CONTAINS(m, "\nnxdns_routed_queries_total{route=\"upstream\"} 11\n");
  CHECK_CONTAINS(m, "\nnxdns_routed_queries_total{route=\"lan\"} 7\n");
  CHECK_CONTAINS(m, "\nnxdns_routed_queries_total{route=\"records\"} 0\n");
  CHECK_CONTAINS(m, "\nnxdns_lan_fallbacks_total 2\n");
  CHECK_CONTAINS(m, "\nnxdns_local_records 3\n");
  CHECK_CONTAINS(m, "nxdns_upstream_info{upstream=\"lan:192.168.1.1:53\",url=\"dns://192.168.1.1:53\",kind=\"dns\"");
}

TEST(LocalNamesSurface, ExplainNamesTheRecordAndItsSource) {
  std::string why;
  auto rec = route::parse_record("files.home.arpa. 120 IN CNAME nas.home.arpa.", "records[0]", &why);
  CHECK_TRUE(rec.has_value());
  STRCMP_EQUAL("files.home.arpa. 120 IN CNAME nas.home.arpa.", route::record_to_text(*rec).c_str());
  auto txt = route::parse_record("t.home.arpa. TXT \"a \\\"b\\\"\"", "records[1]", &why);
  CHECK_TRUE(txt.has_value());
  STRCMP_EQUAL("t.home.arpa. 300 IN TXT \"a \\\"b\\\"\"", route::record_to_text(*txt).c_str());
  CHECK_EQUAL(65, *route::qtype_from_text("https"));
  CHECK_EQUAL(1234, *route::qtype_from_text("TYPE1234"));
  CHECK_FALSE(route::qtype_from_text("TYPE0").has_value());
  CHECK_FALSE(route::qtype_from_text("A1").has_value());
}
