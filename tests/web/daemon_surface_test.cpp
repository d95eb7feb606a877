// The HTTP surface as the composition root wires it: a whole app::Daemon
// (loopback listeners on ephemeral ports, fake upstream transports), its
// loop driven by the test, scraped over real sockets. Proves the wiring:
// pool attempts reach diagnostics, every endpoint reads live state.
#include <event2/event.h>
#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "app/daemon.hpp"
#include "log/log.hpp"
#include "support/loop_driver.hpp"
#include "upstream/fake_transport.hpp"
#include "web/exposition.hpp"
#include "web/loop_http_client.hpp"
#include "web/surface.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;

namespace {

struct Lines {
  std::vector<std::pair<log::Level, std::string>> v;
  static void sink(log::Level l, std::string_view m, void* ctx) { static_cast<Lines*>(ctx)->v.emplace_back(l, std::string(m)); }
  std::size_t count(log::Level l) const {
    std::size_t n = 0;
    for (auto& [lv, t] : v) n += lv == l;
    return n;
  }
};

}  // namespace

TEST_GROUP(DaemonSurface) {
  std::vector<test::FakeTransport*> fakes;
  std::unique_ptr<app::Daemon> d;
  std::unique_ptr<test::LoopDriver> driver;
  std::unique_ptr<Lines> lines;
  std::string why;  // from the last start()

  void setup() override {
    lines = std::make_unique<Lines>();
    log::set_sink(&Lines::sink, lines.get());
  }
  void teardown() override {
    driver.reset();
    d.reset();
    log::set_sink(nullptr, nullptr);
    lines.reset();
  }

  void start(bool http = true, std::optional<net::Endpoint> http_at = std::nullopt) {
    config::Config cfg;
    cfg.source = "test";
    cfg.listen = {*net::make_endpoint("127.0.0.1", 0)};
    for (int i = 0; i < 2; ++i) {
      config::Upstream u;
      u.url = "tls://127.0.0.1:" + std::to_string(8530 + i);
      u.address = *net::make_endpoint("127.0.0.1", static_cast<std::uint16_t>(8530 + i));
      u.tls_name = "dot.test";
      u.priority = i;
      cfg.upstreams.push_back(u);
    }
    cfg.http.enabled = http;
    cfg.http.listen = http_at ? *http_at : *net::make_endpoint("127.0.0.1", 0);
    app::TransportFactory factory = [this](const config::Upstream&, event_base*, loop::Scheduler&,
                                           std::string*) -> std::unique_ptr<upstream::Transport> {
      auto t = std::make_unique<test::FakeTransport>();
      fakes.push_back(t.get());
      return t;
    };
    why.clear();
    d = app::Daemon::create(cfg, factory, &why);
    if (!d) return;
    driver = std::make_unique<test::LoopDriver>(d->base());
  }

  void run_until(const std::function<bool()>& pred, int ms, const char* what) {
    if (!driver->until(pred, ms)) FAIL((std::string("timed out waiting for ") + what).c_str());
  }

  std::unique_ptr<test::LoopHttpClient> get(const std::string& path) {
    auto c = std::make_unique<test::LoopHttpClient>(d->base(), d->http()->local(), test::get_request(path));
    run_until([&] { return c->done(); }, 3000, "the HTTP response");
    return c;
  }

  void submit() {
    dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
    d->pool().submit(std::move(q), [](upstream::PoolOutcome&&) {});
  }
};

TEST(DaemonSurface, MetricsHealthAndDiagnosticsReadLiveState) {
  start();
  if (!d) FAIL(why.c_str());
  auto m = get("/metrics");
  LONGS_EQUAL(200, m->status());
  STRCMP_EQUAL("text/plain; version=0.0.4; charset=utf-8", m->header("Content-Type").c_str());
  auto e = test::parse_exposition(m->body());
  for (const auto& err : e.errors) FAIL(err.c_str());
  STRCMP_EQUAL("0", e.value("nxdns_upstream_in_flight{upstream=\"0\",url=\"tls://127.0.0.1:8530\"}").c_str());

  auto h = get("/api/health");
  LONGS_EQUAL(200, h->status());
  STRCMP_EQUAL("application/json; charset=utf-8", h->header("Content-Type").c_str());
  CHECK_TRUE(h->body().find("\"status\":\"ok\"") != std::string::npos);
  CHECK_TRUE(h->body().find(d->udp_endpoints()[0].to_string()) != std::string::npos);

  // Three requests in flight at upstream 0, seen by the next scrape.
  submit();
  submit();
  submit();
  e = test::parse_exposition(get("/metrics")->body());
  STRCMP_EQUAL("3", e.value("nxdns_upstream_in_flight{upstream=\"0\",url=\"tls://127.0.0.1:8530\"}").c_str());

  // Upstream 0 fails them: it opens an episode (one warn line), the requests
  // fail over to upstream 1, and after two failures 0 is in backoff.
  const auto warns = lines->count(log::Level::warn);
  fakes[0]->fail_oldest(Cause::connect_failed);
  fakes[0]->fail_oldest(Cause::connect_failed);
  LONGS_EQUAL(warns + 1, lines->count(log::Level::warn));
  auto dg = get("/api/diagnostics");
  LONGS_EQUAL(200, dg->status());
  CHECK_TRUE(dg->body().find("\"upstream\":0") != std::string::npos);
  CHECK_TRUE(dg->body().find("\"open\":true") != std::string::npos);
  CHECK_TRUE(dg->body().find("\"failures\":2") != std::string::npos);
  e = test::parse_exposition(get("/metrics")->body());
  STRCMP_EQUAL("1", e.value("nxdns_diagnostics_open_episodes").c_str());
  STRCMP_EQUAL("1", e.value("nxdns_upstream_health{upstream=\"0\",url=\"tls://127.0.0.1:8530\",state=\"backoff\"}").c_str());
  STRCMP_EQUAL("2", e.value("nxdns_upstream_in_flight{upstream=\"1\",url=\"tls://127.0.0.1:8531\"}").c_str());

  // Upstream 1 fails twice too: every upstream in backoff, health is 503.
  fakes[1]->fail_oldest(Cause::eof);
  fakes[1]->fail_oldest(Cause::eof);
  auto down = get("/api/health");
  LONGS_EQUAL(503, down->status());
  CHECK_TRUE(down->body().find("\"status\":\"down\"") != std::string::npos);
  CHECK_TRUE(down->body().find("\"open_episodes\":2") != std::string::npos);
}

TEST(DaemonSurface, HttpDisabledMeansNoServer) {
  start(false);
  if (!d) FAIL(why.c_str());
  CHECK_TRUE(d->http() == nullptr);
}

// A busy http.listen is a start-up failure with a reason, not a daemon
// serving DNS without its metrics.
TEST(DaemonSurface, BusyHttpAddressRefusesToStart) {
  loop::UniqueFd busy(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  auto ep = *net::make_endpoint("127.0.0.1", 0);
  CHECK_EQUAL(0, ::bind(busy.get(), ep.sa(), ep.len));
  CHECK_EQUAL(0, ::listen(busy.get(), 1));
  ep.len = sizeof ep.addr;
  ::getsockname(busy.get(), reinterpret_cast<sockaddr*>(&ep.addr), &ep.len);
  start(true, ep);
  CHECK_TRUE(d == nullptr);
  CHECK_TRUE(why.find("http") != std::string::npos);
  CHECK_TRUE(why.find(ep.to_string()) != std::string::npos);
}

// The status page and its assets through the composition root:
// the strict CSP on the page and its fragment, the assets with their types,
// the summary rendered from live state, /api/history and the OpenAPI
// document served.
TEST(DaemonSurface, StatusPageAssetsHistoryAndOpenApi) {
  start();
  if (!d) FAIL(why.c_str());
  submit();
  submit();
  auto page = get("/");
  LONGS_EQUAL(200, page->status());
  STRCMP_EQUAL("text/html; charset=utf-8", page->header("Content-Type").c_str());
  STRCMP_EQUAL(web::page_csp, page->header("Content-Security-Policy").c_str());
  CHECK_TRUE(std::string(web::page_csp).find("unsafe-inline") == std::string::npos);
  CHECK_TRUE(page->body().find("<!--nxdns:summary-->") == std::string::npos);
  CHECK_TRUE(page->body().find("data-field=\"upstreams.0.in_flight\" data-value=\"2\">2<") != std::string::npos);
  CHECK_TRUE(page->body().find("data-field=\"upstreams.1.url\">tls://127.0.0.1:8531<") != std::string::npos);

  auto frag = get("/summary");
  LONGS_EQUAL(200, frag->status());
  STRCMP_EQUAL(web::page_csp, frag->header("Content-Security-Policy").c_str());
  CHECK_TRUE(frag->body().rfind("<section class=\"overall\"", 0) == 0);

  for (auto [path, type] : {std::pair{"/page.js", "text/javascript; charset=utf-8"},
                            std::pair{"/page.css", "text/css; charset=utf-8"},
                            std::pair{"/favicon.svg", "image/svg+xml"},
                            std::pair{"/api/openapi.json", "application/json; charset=utf-8"}}) {
    auto a = get(path);
    LONGS_EQUAL(200, a->status());
    STRCMP_EQUAL(type, a->header("Content-Type").c_str());
    CHECK_TRUE(!a->body().empty());
  }
  CHECK_TRUE(get("/api/openapi.json")->body().find("\"openapi\": \"3.1.0\"") != std::string::npos);

  auto h = get("/api/history");
  LONGS_EQUAL(200, h->status());
  CHECK_TRUE(h->body().find("\"capacity\":600") != std::string::npos);
}
