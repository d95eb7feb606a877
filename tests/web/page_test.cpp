// The status page: the server-rendered summary (every figure present with
// its API path and value, hostile text escaped) and the embedded files
// (self-contained: nothing loaded from anywhere but this server).
#include <string>

#include "support/fake_scheduler.hpp"
#include "web/embedded_files.hpp"
#include "web/page_summary.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;

namespace {
bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

web::PageInput sample_input() {
  web::PageInput in;
  in.health.version = "1.2.3";
  in.health.uptime_seconds = 4000;
  upstream::EntrySnapshot s;
  s.index = 0;
  s.label = "tls://192.0.2.1:853/<script>";
  s.kind = "dot";
  s.priority = 5;
  s.slots = 8;
  s.in_flight = 3;
  s.queue_depth = 2;
  s.queued_total = 17;
  s.health = upstream::HealthState::backoff;
  s.backoff_remaining = 2500ms;
  s.consecutive_failures = 4;
  s.last_failure = upstream::Cause::attempt_timeout;
  s.transport.open_sessions = 1;
  s.transport.tls_version = "TLSv1.2";
  s.transport.handshakes.full = 1;
  s.transport.handshakes.resumed = 6;
  s.transport.reuse_recoveries = 2;
  s.latency.observe(300ms);
  s.latency.observe(1500ms);
  in.health.upstreams = {s};
  in.health.queries.replies_by_rcode[0][0] = 41;  // udp NOERROR
  in.health.queries.replies_by_rcode[1][3] = 2;   // tcp NXDOMAIN
  in.health.listeners.reject(server::Rejection::tcp_idle_timeout);
  cache::CacheStats c;
  c.entries = 10;
  c.bytes = 2048;
  c.max_bytes = 1 << 20;
  c.hits = 3;
  c.misses = 1;
  c.stale_served = 1;
  in.health.cache = c;
  return in;
}
}  // namespace

TEST_GROUP(PageSummary){};

TEST(PageSummary, EveryFigureCarriesItsApiPathAndValue) {
  const std::string h = web::render_summary(sample_input());
  for (const char* want : {
           "data-field=\"status\">down</strong>",
           "data-field=\"upstreams.0.priority\" data-value=\"5\">5<",
           "data-field=\"upstreams.0.state\">backoff<",
           "data-field=\"upstreams.0.backoff_until_seconds\" data-value=\"2.5\">2.5<",
           "data-field=\"upstreams.0.consecutive_failures\" data-value=\"4\">4<",
           "data-field=\"upstreams.0.last_failure\">attempt_timeout<",
           "data-field=\"upstreams.0.open_sessions\" data-value=\"1\">1<",
           "data-field=\"upstreams.0.slots\" data-value=\"8\">8<",
           "data-field=\"upstreams.0.in_flight\" data-value=\"3\">3<",
           "data-field=\"upstreams.0.queue_depth\" data-value=\"2\">2<",
           "data-field=\"upstreams.0.queued_total\" data-value=\"17\">17<",
           "data-field=\"upstreams.0.tls_version\">TLSv1.2<",
           "data-field=\"upstreams.0.tls_handshakes.resumed\" data-value=\"6\">6<",
           "data-field=\"upstreams.0.tls_handshakes.full\" data-value=\"1\">1<",
           "data-field=\"upstreams.0.reuse_recoveries\" data-value=\"2\">2<",
           "data-field=\"upstreams.0.latency.p50_seconds\" data-value=\"0.5\">500.0 ms<",
           "data-field=\"upstreams.0.latency.p95_seconds\" data-value=\"2.35\">2350.0 ms<",
           "data-field=\"listeners.replies.udp.NOERROR\" data-value=\"41\">41<",
           "data-field=\"listeners.replies.tcp.NXDOMAIN\" data-value=\"2\">2<",
           "data-field=\"listeners.rejections.tcp_idle_timeout\" data-value=\"1\">1<",
           "data-field=\"cache.hit_ratio\" data-value=\"0.75\">75.0 %<",
           "data-field=\"cache.entries\" data-value=\"10\">10<",
           "data-field=\"cache.bytes\" data-value=\"2048\">2.0 KiB<",
           "data-field=\"cache.stale_answers\" data-value=\"1\">1<",
           "data-field=\"uptime_seconds\" data-value=\"4000\">1 h 6 min<",
       }) {
    if (!contains(h, want)) FAIL((std::string("missing: ") + want + "\nin: " + h).c_str());
  }
  // Rejection reasons that never happened are left out.
  CHECK_FALSE(contains(h, "listeners.rejections.send_failed"));
  CHECK_TRUE(contains(h, "No upstream failures since start."));
}

TEST(PageSummary, TextFromTheNetworkIsEscaped) {
  const std::string h = web::render_summary(sample_input());
  CHECK_FALSE(contains(h, "<script>"));
  CHECK_TRUE(contains(h, "tls://192.0.2.1:853/&lt;script&gt;"));
  STRCMP_EQUAL("&amp;&lt;&gt;&quot;&#39;x", web::html_escape("&<>\"'x").c_str());
}

TEST(PageSummary, EpisodesWithTimesAndCauses) {
  test::FakeScheduler sched;
  auto wall = [] { return diag::WallClock::time_point(std::chrono::seconds(1714564800)); };
  diag::Diagnostics d(sched, {}, wall);
  const std::string url = "tls://192.0.2.1:853";
  std::string detail = "connect to 192.0.2.1:853: refused";
  d.on_attempt({0, &url, upstream::Cause::connect_failed, &detail, 1ms});
  sched.advance(3s);
  auto in = sample_input();
  in.episodes = d.episodes();
  in.now = sched.now();
  const std::string h = web::render_summary(in);
  CHECK_TRUE(contains(h, "data-field=\"episodes.0.started_at\">2024-05-01T12:00:00.000Z<"));
  CHECK_TRUE(contains(h, "data-field=\"episodes.0.open\" data-value=\"true\">open<"));
  CHECK_TRUE(contains(h, "data-field=\"episodes.0.first_cause\">connect_failed<"));
  CHECK_TRUE(contains(h, "connect to 192.0.2.1:853: refused"));
  CHECK_TRUE(contains(h, "data-field=\"episodes.0.duration_seconds\" data-value=\"3\">3.0 s<"));
}

TEST(PageSummary, TheCacheFileSaysWhenItWasLastSaved) {
  web::PageInput in = sample_input();
  cache::PersistStats p;
  p.load = cache::LoadResult::loaded;
  p.loaded_entries = 321;
  p.saves = 2;
  p.last_save_unix = 1796000000;  // 2026-11-30 00:53:20 UTC
  p.last_save_bytes = 45678;
  in.health.persist = p;
  const std::string html = web::render_summary(in);
  for (const char* want : {"data-field=\"cache.persist.last_save_unix\" data-value=\"1796000000\">2026-11-30 00:53:20 UTC<",
                           "data-field=\"cache.persist.last_save_bytes\" data-value=\"45678\">44.6 KiB<",
                           "data-field=\"cache.persist.loaded_entries\" data-value=\"321\">321<",
                           "data-field=\"cache.persist.load\">loaded<"}) {
    if (!contains(html, want)) FAIL(want);
  }
  CHECK_FALSE(contains(html, "stale only"));
  in.health.persist = cache::PersistStats{};
  in.health.persist->loaded_stale_only = true;
  const std::string before = web::render_summary(in);
  CHECK_TRUE(contains(before, "data-field=\"cache.persist.last_save_unix\">not since start<"));
  CHECK_TRUE(contains(before, "stale only: the clock was behind the file"));
  in.health.persist.reset();
  CHECK_FALSE(contains(web::render_summary(in), "cache.persist"));
}

TEST(PageSummary, DisabledCacheSaysSo) {
  auto in = sample_input();
  in.health.cache.reset();
  CHECK_TRUE(contains(web::render_summary(in), "The cache is disabled"));
}

TEST(PageSummary, PageIsTheTemplateWithTheSummaryInside) {
  const std::string p = web::render_page("<main><!--nxdns:summary--></main><p><!--nxdns:version--></p>", sample_input());
  CHECK_TRUE(p.rfind("<main><section class=\"overall\"", 0) == 0);
  CHECK_TRUE(contains(p, "<p>1.2.3</p>"));
}

TEST_GROUP(EmbeddedPage){};

TEST(EmbeddedPage, SelfContainedAndWired) {
  const auto html = web::embedded_file("page/index.html");
  CHECK_TRUE(html.has_value());
  const std::string h(*html);
  CHECK_TRUE(contains(h, "<!--nxdns:summary-->"));
  CHECK_TRUE(contains(h, "<script src=\"/page.js\" defer></script>"));
  CHECK_TRUE(contains(h, "<link rel=\"stylesheet\" href=\"/page.css\">"));
  // Nothing from elsewhere and no inline code: the CSP would block it.
  for (const char* bad : {"src=\"http", "href=\"http", "src=\"//", "href=\"//", "<style", "style=\"", "onclick", "onload"}) {
    if (contains(h, bad)) FAIL(bad);
  }
  const std::string css(web::embedded_file("page/page.css").value_or(""));
  CHECK_TRUE(contains(css, "prefers-color-scheme: dark"));
  CHECK_FALSE(contains(css, "url("));
  CHECK_FALSE(contains(css, "@import"));
  const std::string js(web::embedded_file("page/page.js").value_or(""));
  CHECK_TRUE(contains(js, "fetch(\"/summary\""));
  CHECK_FALSE(contains(js, "eval("));
  CHECK_FALSE(contains(js, "http://") && !contains(js, "http://www.w3.org/2000/svg"));
  CHECK_TRUE(web::embedded_file("openapi.json").has_value());
  CHECK_FALSE(web::embedded_file("nope").has_value());
}
