// /api/health and /api/diagnostics documents, and the JSON writer under them.
#include "web/status.hpp"

#include <limits>
#include <string>
#include <vector>

#include "log/log.hpp"
#include "support/fake_scheduler.hpp"
#include "web/json.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using upstream::HealthState;

namespace {

upstream::EntrySnapshot snap(std::size_t index, HealthState h) {
  upstream::EntrySnapshot s;
  s.index = index;
  s.label = "tls://192.0.2." + std::to_string(index + 1) + ":853";
  s.kind = "dot";
  s.health = h;
  return s;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST_GROUP(Json){};

TEST(Json, WritesNestedDocumentsWithCommasInTheRightPlaces) {
  web::JsonWriter w;
  w.begin_object();
  w.key("a").value(1);
  w.key("b").begin_array().value("x").value(true).null().begin_object().end_object().end_array();
  w.key("c").value(0.25);
  w.key("d").begin_object().key("e").value(std::uint64_t{18446744073709551615ull}).end_object();
  w.end_object();
  STRCMP_EQUAL("{\"a\":1,\"b\":[\"x\",true,null,{}],\"c\":0.25,\"d\":{\"e\":18446744073709551615}}", w.str().c_str());
}

TEST(Json, EscapesQuotesBackslashesAndControlCharacters) {
  STRCMP_EQUAL("\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f\"", web::json_quote("a\"b\\c\nd\te\x01\x7f").c_str());
}

TEST(Json, NonFiniteNumbersBecomeNull) {
  web::JsonWriter w;
  w.begin_array().value(std::numeric_limits<double>::infinity()).value(std::numeric_limits<double>::quiet_NaN()).end_array();
  STRCMP_EQUAL("[null,null]", w.str().c_str());
}

TEST_GROUP(HealthStatus){};

TEST(HealthStatus, OkWhenAnyUpstreamIsHealthy) {
  CHECK(web::Status::ok == web::overall_status({snap(0, HealthState::healthy)}));
  CHECK(web::Status::ok == web::overall_status({snap(0, HealthState::backoff), snap(1, HealthState::healthy)}));
  CHECK(web::Status::ok == web::overall_status({snap(0, HealthState::failing), snap(1, HealthState::healthy)}));
}

TEST(HealthStatus, DegradedWhenNoneIsHealthyButNotAllBackOff) {
  CHECK(web::Status::degraded == web::overall_status({snap(0, HealthState::failing)}));
  CHECK(web::Status::degraded == web::overall_status({snap(0, HealthState::backoff), snap(1, HealthState::failing)}));
  // Half-open: its backoff ended and a probe is let through, so it is being
  // tried again, but nothing has worked yet.
  CHECK(web::Status::degraded == web::overall_status({snap(0, HealthState::probing)}));
  CHECK(web::Status::degraded == web::overall_status({snap(0, HealthState::backoff), snap(1, HealthState::probing)}));
}

TEST(HealthStatus, DownWhenEveryUpstreamBacksOffOrThereIsNone) {
  CHECK(web::Status::down == web::overall_status({snap(0, HealthState::backoff), snap(1, HealthState::backoff)}));
  CHECK(web::Status::down == web::overall_status({}));
}

TEST(HealthStatus, OnlyDownIs503) {
  LONGS_EQUAL(200, web::http_status_for(web::Status::ok));
  LONGS_EQUAL(200, web::http_status_for(web::Status::degraded));
  LONGS_EQUAL(503, web::http_status_for(web::Status::down));
}

TEST(HealthStatus, DocumentCarriesUpstreamsAndListeners) {
  web::HealthInput in;
  in.version = "9.9.9";
  in.uptime_seconds = 12.3456;
  auto b = snap(1, HealthState::backoff);
  b.backoff_remaining = 2500ms;
  b.consecutive_failures = 3;
  b.last_failure = upstream::Cause::certificate_clock_behind;
  b.in_flight = 5;
  b.queue_depth = 2;
  b.priority = 7;
  auto a = snap(0, HealthState::healthy);
  a.transport.tls_version = "TLSv1.3";
  a.transport.open_sessions = 4;
  a.transport.handshakes.full = 2;
  a.transport.handshakes.resumed = 5;
  a.transport.pipelining = upstream::PipeliningVerdict::serial;
  a.slots = 8;
  a.queued_total = 11;
  a.transport.reuse_recoveries = 3;
  // p50 is the top of (250, 500] ms, p95 90 % into (1, 2.5] s.
  a.latency.observe(300ms);
  a.latency.observe(1500ms);
  in.upstreams = {b, a};  // priority order; the document lists by index
  in.udp = {*net::make_endpoint("127.0.0.1", 53)};
  in.tcp = {*net::make_endpoint("::1", 53)};
  in.queries_in_flight = 6;
  in.listeners.v4.udp_in_flight = 8;
  in.listeners.v6.tcp_connections = 9;
  in.listeners.reject(server::Rejection::udp_in_flight_cap);
  in.queries.replies_by_rcode[0][0] = 7;  // udp NOERROR
  in.queries.replies_by_rcode[1][2] = 2;  // tcp SERVFAIL
  in.open_episodes = 1;
  const std::string doc = web::render_health(in);
  STRCMP_EQUAL(
      "{\"status\":\"ok\",\"version\":\"9.9.9\",\"uptime_seconds\":12.346,\"upstreams\":["
      "{\"upstream\":0,\"url\":\"tls://192.0.2.1:853\",\"kind\":\"dot\",\"priority\":0,\"state\":\"healthy\","
      "\"consecutive_failures\":0,\"backoff_until_seconds\":null,\"last_failure\":null,"
      "\"certificate_clock_behind\":false,\"in_flight\":0,\"queue_depth\":0,\"queued_total\":11,\"slots\":8,"
      "\"open_sessions\":4,\"reuse_recoveries\":3,"
      "\"latency\":{\"exchanges\":2,\"p50_seconds\":0.5,\"p95_seconds\":2.35},\"pipelining\":\"serial\",\"tls_version\":\"TLSv1.3\",\"tls_handshakes\":{\"full\":2,\"resumed\":5}},"
      "{\"upstream\":1,\"url\":\"tls://192.0.2.2:853\",\"kind\":\"dot\",\"priority\":7,\"state\":\"backoff\","
      "\"consecutive_failures\":3,\"backoff_until_seconds\":2.5,"
      "\"last_failure\":\"certificate_clock_behind\",\"certificate_clock_behind\":true,"
      "\"in_flight\":5,\"queue_depth\":2,\"queued_total\":0,\"slots\":0,"
      "\"open_sessions\":0,\"reuse_recoveries\":0,"
      "\"latency\":{\"exchanges\":0,\"p50_seconds\":null,\"p95_seconds\":null},\"pipelining\":\"unknown\",\"tls_version\":null,\"tls_handshakes\":{\"full\":0,\"resumed\":0}}],"
      "\"listeners\":{\"udp\":[\"127.0.0.1:53\"],\"tcp\":[\"[::1]:53\"],\"queries_in_flight\":6,"
      "\"udp_in_flight\":{\"ipv4\":8,\"ipv6\":0},\"udp_in_flight_cap\":4096,"
      "\"tcp_connections\":{\"ipv4\":0,\"ipv6\":9},\"tcp_connection_cap\":256,"
      "\"replies\":{\"udp\":{\"NOERROR\":7},\"tcp\":{\"SERVFAIL\":2}},"
      "\"rejections\":{\"udp_in_flight_cap\":1,\"tcp_connection_cap\":0,\"tcp_frame_too_large\":0,"
      "\"tcp_zero_length_frame\":0,\"tcp_idle_timeout\":0,\"tcp_write_stalled\":0,"
      "\"udp_truncated_datagram\":0,\"send_failed\":0,\"accept_failed\":0,\"receive_failed\":0,"
      "\"udp_query_too_large\":0,\"udp_access_refused\":0,\"tcp_access_refused\":0,\"udp_client_share\":0,"
      "\"tcp_client_share\":0,\"udp_client_rate\":0,\"tcp_client_rate\":0,\"client_table_full\":0,\"tcp_refused_budget\":0}},\"open_episodes\":1,\"cache\":{\"enabled\":false}}",
      doc.c_str());
}

TEST_GROUP(DiagnosticsDocument) {
  void setup() override { log::set_sink([](log::Level, std::string_view, void*) {}, nullptr); }
  void teardown() override { log::set_sink(nullptr, nullptr); }
};

TEST(DiagnosticsDocument, OpenAndClosedEpisodesWithAgesAndCauses) {
  test::FakeScheduler sched;
  auto wall = [] { return diag::WallClock::time_point(std::chrono::seconds(1714564800)); };  // 2024-05-01T12:00:00Z
  diag::Diagnostics d(sched, {}, wall);
  const std::string url0 = "tls://192.0.2.1:853", url1 = "tls://192.0.2.2:853";
  std::string detail = "connect to 192.0.2.1:853: \"refused\"";
  d.on_attempt({0, &url0, upstream::Cause::connect_failed, &detail, 1ms});
  sched.advance(1500ms);
  std::string d2 = "no answer";
  d.on_attempt({0, &url0, upstream::Cause::attempt_timeout, &d2, 2000ms});
  d.on_attempt({0, &url0, upstream::Cause::ok, nullptr, 40ms});
  sched.advance(500ms);
  d.on_attempt({1, &url1, upstream::Cause::eof, nullptr, 5ms});
  sched.advance(250ms);

  const std::string doc = web::render_diagnostics(d.episodes(), d.capacity(), sched.now());
  // Newest first: the open episode of upstream 1, then the closed one.
  STRCMP_EQUAL(
      "{\"capacity\":32,\"episodes\":["
      "{\"id\":2,\"upstream\":1,\"url\":\"tls://192.0.2.2:853\",\"open\":true,"
      "\"started_at\":\"2024-05-01T12:00:00.000Z\",\"started_seconds_ago\":0.25,\"ended_at\":null,"
      "\"duration_seconds\":0.25,\"failures\":1,\"first_cause\":\"eof\",\"first_detail\":\"\","
      "\"last_cause\":\"eof\",\"last_detail\":\"\",\"causes\":{\"eof\":1}},"
      "{\"id\":1,\"upstream\":0,\"url\":\"tls://192.0.2.1:853\",\"open\":false,"
      "\"started_at\":\"2024-05-01T12:00:00.000Z\",\"started_seconds_ago\":2.25,"
      "\"ended_at\":\"2024-05-01T12:00:00.000Z\",\"duration_seconds\":1.5,\"failures\":2,"
      "\"first_cause\":\"connect_failed\",\"first_detail\":\"connect to 192.0.2.1:853: \\\"refused\\\"\","
      "\"last_cause\":\"attempt_timeout\",\"last_detail\":\"no answer\","
      "\"causes\":{\"connect_failed\":1,\"attempt_timeout\":1}}]}",
      doc.c_str());
  CHECK_TRUE(contains(doc, "\"open\":true"));
}
