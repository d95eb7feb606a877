// /metrics rendering, driven through a real Pool: requests, answers,
// failures, failover, queueing and backoff happen in the pool under a fake
// clock; its snapshot() is rendered and every sample is checked, each field
// of each upstream with a value of its own.
#include "web/metrics.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support/fake_scheduler.hpp"
#include "support/skipped_cases.hpp"
#include "upstream/curl_library.hpp"
#include "upstream/pool.hpp"
#include "web/exposition.hpp"
#include "web/stats_transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using upstream::Cause;

namespace {

dns::Bytes a_query() { return dns::Bytes{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}; }

// Checks samples one by one and remembers which, so the test can insist at
// the end that nothing was rendered that it did not look at.
struct Checker {
  const test::Exposition& e;
  std::set<std::string> seen;

  void expect(const std::string& key, const std::string& value) {
    seen.insert(key);
    if (!e.has(key)) FAIL(("missing series " + key).c_str());
    STRCMP_EQUAL_TEXT(value.c_str(), e.value(key).c_str(), key.c_str());
  }
  void expect(const std::string& key, std::uint64_t value) { expect(key, std::to_string(value)); }
  void absent(const std::string& key) {
    if (e.has(key)) FAIL(("unexpected series " + key).c_str());
  }
  std::vector<std::string> unchecked() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : e.samples)
      if (!seen.count(k)) out.push_back(k);
    return out;
  }
};

std::string U(std::size_t idx, const std::string& url) {
  return "upstream=\"" + std::to_string(idx) + "\",url=\"" + url + "\"";
}

const char* const bucket_le[] = {"0.005", "0.01", "0.025", "0.05", "0.075", "0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf"};

}  // namespace

TEST_GROUP(Metrics){};

TEST(Metrics, RealPoolThroughSnapshotRendersEverySeriesWithItsOwnValue) {
  test::FakeScheduler sched;
  // Configuration index and priority differ on purpose: the labels must
  // carry the configuration index, and the output is ordered by it.
  auto a = std::make_unique<test::StatsTransport>();  // config 2, priority 0: takes the traffic
  auto b = std::make_unique<test::StatsTransport>();  // config 0, priority 10: failover, ends in backoff
  auto c = std::make_unique<test::StatsTransport>();  // config 1, priority 20: last resort, DoH
  auto *A = a.get(), *B = b.get(), *C = c.get();
  A->stats_value = {7, 11, 13, 17, 19, 23, "TLSv1.3"};
  B->stats_value = {2, 3, 5, 29, 31, 37, "TLSv1.2"};
  A->stats_value.requeued = 41;
  A->stats_value.handshakes.full = 43;
  A->stats_value.handshakes.resumed = 47;
  A->stats_value.handshakes.resumption_refused = 53;
  A->stats_value.handshakes.full_duration.observe(30ms);      // le 0.05
  A->stats_value.handshakes.resumed_duration.observe(8ms);    // le 0.01
  A->stats_value.handshakes.resumed_duration.observe(9ms);
  B->stats_value.handshakes.full = 59;
  A->stats_value.resent = 61;
  A->stats_value.hedged = 24;
  B->stats_value.outage_dials = 67;
  A->stats_value.pipelining = upstream::PipeliningVerdict::serial;
  B->stats_value.pipelining = upstream::PipeliningVerdict::pipelining;
  C->kind_value = "doh";
  const std::string ua = "tls://192.0.2.10:853", ub = "tls://192.0.2.20:853",
                    uc = "https://dns.example/dns-query";
  std::vector<upstream::EntrySpec> specs;
  specs.push_back({2, ua, 0, std::move(a)});
  specs.push_back({0, ub, 10, std::move(b)});
  specs.push_back({1, uc, 20, std::move(c)});
  upstream::Pool pool(sched, std::move(specs), upstream::PoolOptions{});

  int delivered = 0;
  for (int i = 0; i < 72; ++i) pool.submit(a_query(), [&delivered](upstream::PoolOutcome&&) { ++delivered; });
  // A runs 64, eight wait in its queue.
  sched.advance(250ms);
  CHECK_TRUE(A->fake.answer_oldest());                 // ok; a waiter moves in after 0.25 s
  CHECK_TRUE(A->fake.answer_oldest());                 // ok; another
  CHECK_TRUE(A->fake.fail_oldest(Cause::connect_failed));  // A failing (1); that request fails over to B; a waiter moves in
  CHECK_TRUE(B->fake.fail_oldest(Cause::eof));          // B failing (1); the request goes on to C
  CHECK_TRUE(A->fake.answer_oldest());                 // A healthy again; a waiter moves in
  CHECK_TRUE(A->fake.fail_oldest(Cause::tls_protocol));  // A failing (1); request to B; a waiter moves in
  CHECK_TRUE(B->fake.fail_oldest(Cause::bad_response));  // B: 2 in a row -> backoff 1 s; request to C
  sched.advance(100ms);

  web::MetricsInput in;
  in.upstreams = pool.snapshot();
  auto& q = in.queries;
  q.replies_by_rcode[0][0] = 101;
  q.replies_by_rcode[0][2] = 102;
  q.replies_by_rcode[0][3] = 103;
  q.replies_by_rcode[0][9] = 106;  // NOTAUTH: rendered because it is not zero
  q.replies_by_rcode[1][16] = 130;  // BADVERS: a 12-bit rcode has its own label
  q.replies_by_rcode[1][query::rcode_bucket_other] = 131;
  for (std::size_t k = 0; k < route::route_kind_count; ++k) q.routed[k] = 140 + k;
  q.lan_fallbacks = 150;
  q.replies_by_rcode[1][0] = 104;
  q.replies_by_rcode[1][5] = 105;
  q.formerr_unparseable = {107, 108};
  q.dropped_unreadable = {109, 110};
  q.budget_exhausted = 111;
  q.upstream_failed = 112;
  q.bad_upstream_answer = 113;
  q.abandoned = 114;
  in.queries_in_flight = 115;
  in.listeners.v4.udp_in_flight = 116;
  in.listeners.v6.udp_in_flight = 117;
  in.listeners.v4.tcp_connections = 118;
  in.listeners.v6.tcp_connections = 119;
  in.listeners.tcp_accepted = 120;
  for (std::size_t r = 0; r < server::rejection_count; ++r) in.listeners.rejections[r] = 200 + r;
  in.build = {"1.2.3", "2.28.9", "7.88.1", "2.1.12-stable", "0.9.75"};
  in.uptime_seconds = 3.5;
  in.episodes_opened_total = 121;
  in.episodes_open = 2;

  const std::string text = web::render_metrics(in);
  const auto e = test::parse_exposition(text);
  for (const auto& err : e.errors) FAIL(err.c_str());
  Checker k{e, {}};

  const std::string la = U(2, ua), lb = U(0, ub), lc = U(1, uc);
  // Ordered by configuration index, not by priority.
  const auto pb = text.find("nxdns_upstream_in_flight{" + lb), pc = text.find("nxdns_upstream_in_flight{" + lc),
             pa = text.find("nxdns_upstream_in_flight{" + la);
  CHECK_TRUE(pb < pc && pc < pa && pa != std::string::npos);

  k.expect("nxdns_upstream_info{" + la + ",kind=\"dot\",priority=\"0\"}", "1");
  k.expect("nxdns_upstream_info{" + lb + ",kind=\"dot\",priority=\"10\"}", "1");
  k.expect("nxdns_upstream_info{" + lc + ",kind=\"doh\",priority=\"20\"}", "1");
  // A: 64 running, 8 queued minus the 5 that moved in; B: nothing; C: the
  // two requests that failed over twice.
  k.expect("nxdns_upstream_in_flight{" + la + "}", 64);
  k.expect("nxdns_upstream_in_flight{" + lb + "}", 0);
  k.expect("nxdns_upstream_in_flight{" + lc + "}", 2);
  for (const auto& l : {la, lb, lc}) {
    k.expect("nxdns_upstream_max_in_flight{" + l + "}", 64);
    k.expect("nxdns_upstream_slots{" + l + "}", 8);
    k.expect("nxdns_upstream_capacity{" + l + "}", 64);
  }
  k.expect("nxdns_upstream_queue_depth{" + la + "}", 3);
  k.expect("nxdns_upstream_queue_depth{" + lb + "}", 0);
  k.expect("nxdns_upstream_queue_depth{" + lc + "}", 0);
  k.expect("nxdns_upstream_queued_total{" + la + "}", 5);
  k.expect("nxdns_upstream_queued_total{" + lb + "}", 0);
  k.expect("nxdns_upstream_queued_total{" + lc + "}", 0);
  k.expect("nxdns_upstream_queued_seconds_total{" + la + "}", "1.25");  // 5 x 0.25 s
  k.expect("nxdns_upstream_queued_seconds_total{" + lb + "}", "0");
  k.expect("nxdns_upstream_queued_seconds_total{" + lc + "}", "0");

  k.expect("nxdns_upstream_open_sessions{" + la + "}", 7);
  k.expect("nxdns_upstream_open_sessions{" + lb + "}", 2);
  k.expect("nxdns_upstream_open_sessions{" + lc + "}", 0);
  k.expect("nxdns_upstream_connections_total{" + la + "}", 11);
  k.expect("nxdns_upstream_connections_total{" + lb + "}", 3);
  k.expect("nxdns_upstream_connections_total{" + lc + "}", 0);
  k.expect("nxdns_upstream_exchanges_total{" + la + ",session=\"new\"}", 13);
  k.expect("nxdns_upstream_exchanges_total{" + la + ",session=\"reused\"}", 17);
  k.expect("nxdns_upstream_exchanges_total{" + lb + ",session=\"new\"}", 5);
  k.expect("nxdns_upstream_exchanges_total{" + lb + ",session=\"reused\"}", 29);
  k.expect("nxdns_upstream_exchanges_total{" + lc + ",session=\"new\"}", 0);
  k.expect("nxdns_upstream_exchanges_total{" + lc + ",session=\"reused\"}", 0);
  k.expect("nxdns_upstream_redials_total{" + la + "}", 19);
  k.expect("nxdns_upstream_redials_total{" + lb + "}", 31);
  k.expect("nxdns_upstream_redials_total{" + lc + "}", 0);
  k.expect("nxdns_upstream_reuse_recoveries_total{" + la + "}", 23);
  k.expect("nxdns_upstream_reuse_recoveries_total{" + lb + "}", 37);
  k.expect("nxdns_upstream_reuse_recoveries_total{" + lc + "}", 0);
  k.expect("nxdns_upstream_requeued_total{" + la + "}", 41);
  k.expect("nxdns_upstream_requeued_total{" + lb + "}", 0);
  k.expect("nxdns_upstream_requeued_total{" + lc + "}", 0);
  k.expect("nxdns_upstream_resent_total{" + la + "}", 61);
  k.expect("nxdns_upstream_resent_total{" + lb + "}", 0);
  k.expect("nxdns_upstream_resent_total{" + lc + "}", 0);
  k.expect("nxdns_upstream_hedged_total{" + la + "}", 24);
  k.expect("nxdns_upstream_hedged_total{" + lb + "}", 0);
  k.expect("nxdns_upstream_hedged_total{" + lc + "}", 0);
  k.expect("nxdns_upstream_outage_dials_total{" + la + "}", 0);
  k.expect("nxdns_upstream_outage_dials_total{" + lb + "}", 67);
  k.expect("nxdns_upstream_outage_dials_total{" + lc + "}", 0);
  const std::pair<std::string, const char*> verdicts[] = {{la, "serial"}, {lb, "pipelining"}, {lc, "unknown"}};
  for (const auto& [l, cur] : verdicts) {
    for (const char* v : {"unknown", "pipelining", "serial"}) {
      k.expect("nxdns_upstream_pipelining{" + l + ",verdict=\"" + v + "\"}", std::string(v) == cur ? "1" : "0");
    }
  }
  k.expect("nxdns_upstream_tls_info{" + la + ",version=\"TLSv1.3\"}", "1");
  k.expect("nxdns_upstream_tls_info{" + lb + ",version=\"TLSv1.2\"}", "1");
  k.expect("nxdns_upstream_tls_info{" + lc + ",version=\"none\"}", "1");
  // Handshakes: DoT upstreams only (C is DoH: curl's handshakes are not seen).
  k.expect("nxdns_upstream_tls_handshakes_total{" + la + ",kind=\"full\"}", 43);
  k.expect("nxdns_upstream_tls_handshakes_total{" + la + ",kind=\"resumed\"}", 47);
  k.expect("nxdns_upstream_tls_handshakes_total{" + lb + ",kind=\"full\"}", 59);
  k.expect("nxdns_upstream_tls_handshakes_total{" + lb + ",kind=\"resumed\"}", 0);
  k.absent("nxdns_upstream_tls_handshakes_total{" + lc + ",kind=\"full\"}");
  k.expect("nxdns_upstream_tls_resumptions_refused_total{" + la + "}", 53);
  k.expect("nxdns_upstream_tls_resumptions_refused_total{" + lb + "}", 0);
  k.absent("nxdns_upstream_tls_resumptions_refused_total{" + lc + "}");
  for (std::size_t i = 0; i < std::size(bucket_le); ++i) {
    const std::string le = std::string(",le=\"") + bucket_le[i] + "\"}";
    k.expect("nxdns_upstream_tls_handshake_seconds_bucket{" + la + ",kind=\"full\"" + le, i >= 3 ? 1 : 0);
    k.expect("nxdns_upstream_tls_handshake_seconds_bucket{" + la + ",kind=\"resumed\"" + le, i >= 1 ? 2 : 0);
    k.expect("nxdns_upstream_tls_handshake_seconds_bucket{" + lb + ",kind=\"full\"" + le, 0);
    k.expect("nxdns_upstream_tls_handshake_seconds_bucket{" + lb + ",kind=\"resumed\"" + le, 0);
  }
  k.expect("nxdns_upstream_tls_handshake_seconds_sum{" + la + ",kind=\"full\"}", "0.03");
  k.expect("nxdns_upstream_tls_handshake_seconds_count{" + la + ",kind=\"full\"}", 1);
  k.expect("nxdns_upstream_tls_handshake_seconds_sum{" + la + ",kind=\"resumed\"}", "0.017");
  k.expect("nxdns_upstream_tls_handshake_seconds_count{" + la + ",kind=\"resumed\"}", 2);
  for (const char* kind : {"full", "resumed"}) {
    k.expect("nxdns_upstream_tls_handshake_seconds_sum{" + lb + ",kind=\"" + kind + "\"}", "0");
    k.expect("nxdns_upstream_tls_handshake_seconds_count{" + lb + ",kind=\"" + kind + "\"}", 0);
  }
  k.absent("nxdns_upstream_tls_handshake_seconds_count{" + lc + ",kind=\"full\"}");

  // Health: A failing (one failure since its last success), B in backoff
  // with 0.9 s left, C healthy.
  const char* states[] = {"healthy", "failing", "backoff", "probing"};
  const std::pair<std::string, const char*> health[] = {{la, "failing"}, {lb, "backoff"}, {lc, "healthy"}};
  for (const auto& [l, cur] : health) {
    for (const char* st : states) {
      k.expect("nxdns_upstream_health{" + l + ",state=\"" + st + "\"}", std::string(st) == cur ? "1" : "0");
    }
  }
  k.expect("nxdns_upstream_backoff_seconds{" + la + "}", "0");
  k.expect("nxdns_upstream_backoff_seconds{" + lb + "}", "0.9");
  k.expect("nxdns_upstream_backoff_seconds{" + lc + "}", "0");
  // No attempt failed for the clock here (certificate_clock_behind is
  // pinned in status_test and tests/integration/certificate_clock.sh).
  k.expect("nxdns_upstream_certificate_clock_behind{" + la + "}", "0");
  k.expect("nxdns_upstream_certificate_clock_behind{" + lb + "}", "0");
  k.expect("nxdns_upstream_certificate_clock_behind{" + lc + "}", "0");
  k.expect("nxdns_upstream_consecutive_failures{" + la + "}", 1);
  k.expect("nxdns_upstream_consecutive_failures{" + lb + "}", 2);
  k.expect("nxdns_upstream_consecutive_failures{" + lc + "}", 0);
  k.expect("nxdns_upstream_backoffs_total{" + la + "}", 0);
  k.expect("nxdns_upstream_backoffs_total{" + lb + "}", 1);
  k.expect("nxdns_upstream_backoffs_total{" + lc + "}", 0);

  // Attempts by outcome: every cause is rendered, zero or not.
  for (std::size_t ci = 0; ci < upstream::cause_count; ++ci) {
    const auto cause = static_cast<Cause>(ci);
    const std::string o = std::string(",outcome=\"") + upstream::describe(cause) + "\"}";
    const std::uint64_t want_a = cause == Cause::ok ? 3 : cause == Cause::connect_failed || cause == Cause::tls_protocol ? 1 : 0;
    const std::uint64_t want_b = cause == Cause::eof || cause == Cause::bad_response ? 1 : 0;
    k.expect("nxdns_upstream_attempts_total{" + la + o, want_a);
    k.expect("nxdns_upstream_attempts_total{" + lb + o, want_b);
    k.expect("nxdns_upstream_attempts_total{" + lc + o, 0);
  }

  // No error answers here (ErrorAnswersAreCountedByRcode gives them values).
  for (const auto& l : {la, lb, lc}) {
    for (const char* rcode : {"FORMERR", "SERVFAIL", "NOTIMP", "REFUSED", "OTHER"}) {
      k.expect("nxdns_upstream_error_answers_total{" + l + ",rcode=\"" + rcode + "\"}", 0);
    }
  }

  // Latency: A's three answers all took 0.25 s (bucket le="0.25" counts
  // them, cumulatively upward); the others have none.
  for (std::size_t i = 0; i < sizeof bucket_le / sizeof bucket_le[0]; ++i) {
    const std::string le = std::string(",le=\"") + bucket_le[i] + "\"}";
    k.expect("nxdns_upstream_latency_seconds_bucket{" + la + le, i >= 6 ? 3 : 0);
    k.expect("nxdns_upstream_latency_seconds_bucket{" + lb + le, 0);
    k.expect("nxdns_upstream_latency_seconds_bucket{" + lc + le, 0);
  }
  k.expect("nxdns_upstream_latency_seconds_sum{" + la + "}", "0.75");
  k.expect("nxdns_upstream_latency_seconds_count{" + la + "}", 3);
  for (const auto& l : {lb, lc}) {
    k.expect("nxdns_upstream_latency_seconds_sum{" + l + "}", "0");
    k.expect("nxdns_upstream_latency_seconds_count{" + l + "}", 0);
  }

  // Listener side.
  const char* rc[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"};
  const std::uint64_t udp_rc[] = {101, 0, 102, 103, 0, 0}, tcp_rc[] = {104, 0, 0, 0, 0, 105};
  for (int i = 0; i < 6; ++i) {
    k.expect(std::string("nxdns_queries_total{protocol=\"udp\",rcode=\"") + rc[i] + "\"}", udp_rc[i]);
    k.expect(std::string("nxdns_queries_total{protocol=\"tcp\",rcode=\"") + rc[i] + "\"}", tcp_rc[i]);
  }
  k.expect("nxdns_queries_total{protocol=\"udp\",rcode=\"NOTAUTH\"}", 106);
  k.absent("nxdns_queries_total{protocol=\"tcp\",rcode=\"NOTAUTH\"}");
  k.expect("nxdns_queries_total{protocol=\"tcp\",rcode=\"BADVERS\"}", 130);
  k.expect("nxdns_queries_total{protocol=\"tcp\",rcode=\"OTHER\"}", 131);
  k.absent("nxdns_queries_total{protocol=\"udp\",rcode=\"BADVERS\"}");
  k.expect("nxdns_queries_in_flight", 115);
  k.expect("nxdns_query_failures_total{reason=\"budget_exhausted\"}", 111);
  k.expect("nxdns_query_failures_total{reason=\"upstream_failed\"}", 112);
  k.expect("nxdns_query_failures_total{reason=\"bad_upstream_answer\"}", 113);
  k.expect("nxdns_queries_abandoned_total", 114);
  k.expect("nxdns_queries_malformed_total{protocol=\"udp\",action=\"formerr\"}", 107);
  k.expect("nxdns_queries_malformed_total{protocol=\"tcp\",action=\"formerr\"}", 108);
  k.expect("nxdns_queries_malformed_total{protocol=\"udp\",action=\"dropped\"}", 109);
  k.expect("nxdns_queries_malformed_total{protocol=\"tcp\",action=\"dropped\"}", 110);
  for (std::size_t r = 0; r < server::rejection_count; ++r) {
    k.expect(std::string("nxdns_rejections_total{reason=\"") + server::describe(static_cast<server::Rejection>(r)) +
                 "\"}",
             200 + r);
  }
  k.expect("nxdns_udp_in_flight{family=\"ipv4\"}", 116);
  k.expect("nxdns_udp_in_flight{family=\"ipv6\"}", 117);
  k.expect("nxdns_tcp_connections{family=\"ipv4\"}", 118);
  k.expect("nxdns_tcp_connections{family=\"ipv6\"}", 119);
  k.expect("nxdns_tcp_accepted_total", 120);

  // Routes.
  for (std::size_t r = 0; r < route::route_kind_count; ++r) {
    k.expect(std::string("nxdns_routed_queries_total{route=\"") + route::describe(static_cast<route::RouteKind>(r)) + "\"}",
             140 + r);
  }
  k.expect("nxdns_lan_fallbacks_total", 150);

  // Process.
  k.expect("nxdns_diagnostics_episodes_total", 121);
  k.expect("nxdns_diagnostics_open_episodes", 2);
  k.expect("nxdns_build_info{version=\"1.2.3\",mbedtls=\"2.28.9\",curl=\"7.88.1\",libevent=\"2.1.12-stable\","
           "microhttpd=\"0.9.75\"}",
           "1");
  k.expect("nxdns_uptime_seconds", "3.5");

  for (const auto& key : k.unchecked()) FAIL(("series rendered but not checked: " + key).c_str());

  // Types: counters end in _total (and only counters do).
  for (const auto& [fam, type] : e.types) {
    const bool total = fam.size() > 6 && fam.compare(fam.size() - 6, 6, "_total") == 0;
    if (type == "counter") CHECK_TEXT(total, fam.c_str());
    else CHECK_TEXT(!total, fam.c_str());
  }
  STRCMP_EQUAL("histogram", e.types.at("nxdns_upstream_latency_seconds").c_str());
  STRCMP_EQUAL("histogram", e.types.at("nxdns_upstream_tls_handshake_seconds").c_str());
  STRCMP_EQUAL("counter", e.types.at("nxdns_upstream_tls_handshakes_total").c_str());
  STRCMP_EQUAL("gauge", e.types.at("nxdns_upstream_queue_depth").c_str());
  STRCMP_EQUAL("counter", e.types.at("nxdns_upstream_queued_total").c_str());
  LONGS_EQUAL(45, e.families.size());  // 33 + three TLS handshake families + capacity + error answers + clock behind + resent + hedged + outage dials + pipelining + the two route families

  // The three answers reached their callers; everything else is still in
  // flight or queued.
  CHECK_EQUAL(3, delivered);
}

TEST(Metrics, LabelValuesAreEscaped) {
  STRCMP_EQUAL("a\\\\b\\\"c\\nd", web::escape_label_value("a\\b\"c\nd").c_str());
  STRCMP_EQUAL("tls://127.0.0.1:853", web::escape_label_value("tls://127.0.0.1:853").c_str());

  web::MetricsInput in;
  upstream::EntrySnapshot s;
  s.index = 4;
  s.label = "https://x.example/\"q\"\\\n";
  s.kind = "doh";
  in.upstreams.push_back(s);
  const auto e = test::parse_exposition(web::render_metrics(in));
  for (const auto& err : e.errors) FAIL(err.c_str());
  CHECK_TRUE(e.has("nxdns_upstream_in_flight{upstream=\"4\",url=\"https://x.example/\\\"q\\\"\\\\\\n\"}"));
}

TEST(Metrics, SampleValuesUseTheFormatsSpellings) {
  STRCMP_EQUAL("0", web::format_sample(0.0).c_str());
  STRCMP_EQUAL("1.25", web::format_sample(1.25).c_str());
  STRCMP_EQUAL("5", web::format_sample(5.0).c_str());
  STRCMP_EQUAL("+Inf", web::format_sample(std::numeric_limits<double>::infinity()).c_str());
  STRCMP_EQUAL("-Inf", web::format_sample(-std::numeric_limits<double>::infinity()).c_str());
  STRCMP_EQUAL("NaN", web::format_sample(std::numeric_limits<double>::quiet_NaN()).c_str());
  STRCMP_EQUAL("SERVFAIL", web::rcode_name(2));
  STRCMP_EQUAL("RCODE12", web::rcode_name(12));
  STRCMP_EQUAL("BADVERS", web::rcode_name(16));
  STRCMP_EQUAL("BADCOOKIE", web::rcode_name(23));
  STRCMP_EQUAL("OTHER", web::rcode_name(24));
  STRCMP_EQUAL("OTHER", web::rcode_name(4095));
  STRCMP_EQUAL("OTHER", web::rcode_name(70000));
}

TEST(Metrics, BuildInfoNamesTheLinkedLibraries) {
  // libcurl's version is known once something opened it (a DoH upstream);
  // before that the label is empty rather than loading curl for a label.
  if (!upstream::curl_library_loaded()) STRCMP_EQUAL("", web::build_info().curl.c_str());
  std::string why;
  CHECK_TEXT(upstream::load_curl_library(&why) != nullptr, why.c_str());
  const auto b = web::build_info();
  CHECK_FALSE(b.version.empty());
  CHECK_FALSE(b.mbedtls.empty());
  CHECK_FALSE(b.curl.empty());
  CHECK_FALSE(b.libevent.empty());
  CHECK_FALSE(b.microhttpd.empty());
}

// The same document through promtool's own linter. Named *Promtool* so that
// it is its own ctest entry (cpputest.web.promtool), Skipped where promtool
// is not installed; scripts/install-deps.sh installs it.
TEST(Metrics, PassesPromtoolCheckMetrics) {
  const char* promtool = "/usr/bin/promtool";
  if (::access(promtool, X_OK) != 0) SKIP_CASE("/usr/bin/promtool not installed (Debian: prometheus)");
  test::FakeScheduler sched;
  auto t = std::make_unique<test::StatsTransport>();
  t->stats_value.tls_version = "TLSv1.3";
  auto* fake = t.get();
  std::vector<upstream::EntrySpec> specs;
  specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
  upstream::Pool pool(sched, std::move(specs), upstream::PoolOptions{});
  pool.submit(a_query(), [](upstream::PoolOutcome&&) {});
  sched.advance(30ms);
  fake->fake.answer_oldest();
  sched.run_ready();
  web::MetricsInput in;
  in.upstreams = pool.snapshot();
  in.build = web::build_info();
  in.queries.replies_by_rcode[0][0] = 1;
  in.cache = cache::CacheStats{};  // the cache families too
  in.cache->hits = 3;

  char path[] = "/tmp/nxdns-metrics-XXXXXX";
  const int fd = ::mkstemp(path);
  CHECK_TRUE(fd >= 0);
  ::close(fd);
  {
    std::ofstream f(path);
    f << web::render_metrics(in);
  }
  const std::string cmd = std::string(promtool) + " check metrics < " + path + " > " + path + ".out 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream out(std::string(path) + ".out");
  const std::string msg((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  ::unlink(path);
  ::unlink((std::string(path) + ".out").c_str());
  if (rc != 0) FAIL(("promtool check metrics failed: " + msg).c_str());
}

TEST(Metrics, ErrorAnswersAreCountedByRcodeAndHalfOpenIsVisible) {
  test::FakeScheduler sched;
  auto t = std::make_unique<test::StatsTransport>();
  auto* T = t.get();
  std::vector<upstream::EntrySpec> specs;
  specs.push_back({0, "tls://192.0.2.30:853", 0, std::move(t)});
  upstream::Pool pool(sched, std::move(specs), upstream::PoolOptions{});
  auto with_rcode = [](std::uint8_t rc) {
    return [rc](const dns::Bytes& q) {
      dns::Bytes r = q;
      r[2] |= 0x80;
      r[3] = static_cast<std::uint8_t>((r[3] & 0xF0) | rc);
      return r;
    };
  };
  // A lone upstream: each error answer is also the best one, relayed.
  for (std::uint8_t rc : {5, 2, 2, 9, 9}) {
    pool.submit(a_query(), [](upstream::PoolOutcome&&) {});
    CHECK_TRUE(T->fake.respond_oldest(with_rcode(rc)));
  }
  sched.run_ready();
  sched.advance(1s);  // REFUSED + NOTAUTH backed it off for 1 s; now half-open

  web::MetricsInput in;
  in.upstreams = pool.snapshot();
  const auto e = test::parse_exposition(web::render_metrics(in));
  for (const auto& err : e.errors) FAIL(err.c_str());
  Checker k{e, {}};
  const std::string l = U(0, "tls://192.0.2.30:853");
  const std::pair<const char*, std::uint64_t> want[] = {
      {"FORMERR", 0}, {"SERVFAIL", 2}, {"NOTIMP", 0}, {"REFUSED", 1}, {"OTHER", 2}};
  for (const auto& [rcode, n] : want) {
    k.expect("nxdns_upstream_error_answers_total{" + l + ",rcode=\"" + rcode + "\"}", n);
  }
  k.expect("nxdns_upstream_attempts_total{" + l + ",outcome=\"error_answer\"}", 5);
  k.expect("nxdns_upstream_attempts_total{" + l + ",outcome=\"ok\"}", 0);
  k.expect("nxdns_upstream_health{" + l + ",state=\"probing\"}", "1");
  k.expect("nxdns_upstream_health{" + l + ",state=\"backoff\"}", "0");
  k.expect("nxdns_upstream_backoffs_total{" + l + "}", 1);
}
