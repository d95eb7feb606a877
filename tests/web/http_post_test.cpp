// Operator actions on the HTTP surface: POST routes run for a loopback peer
// that sends the X-Nxdns-Request header and no foreign Origin, with the
// URL's query arguments; a browser's simple cross-origin POST and a foreign
// page's POST are 403; other methods on them are 405 (Allow: POST), a CORS
// preflight included; and the real flush route empties a real cache.
#include "web/http_server.hpp"

#include <event2/event.h>

#include <map>
#include <memory>
#include <string>

#include "loop/event_handles.hpp"
#include "support/fake_scheduler.hpp"
#include "support/loop_driver.hpp"
#include "upstream/fake_transport.hpp"
#include "web/loop_http_client.hpp"
#include "web/surface.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using web::HttpServer;
using web::Response;

TEST_GROUP(HttpPost) {
  loop::EventBasePtr base;
  std::unique_ptr<test::LoopDriver> driver;
  std::unique_ptr<HttpServer> server;
  std::map<std::string, std::string> seen_args;
  int calls = 0;

  void setup() override {
    base.reset(event_base_new());
    driver = std::make_unique<test::LoopDriver>(base.get());
  }
  void teardown() override {
    server.reset();
    driver.reset();
    base.reset();
  }
  void start(web::PostRoutes post) {
    web::HttpServerOptions o;
    o.listen = *net::make_endpoint("127.0.0.1", 0);
    std::string why;
    server = HttpServer::start(base.get(), o, {}, &why, std::move(post));
    if (!server) FAIL(why.c_str());
  }
  // What `nxdns cache flush` sends (cli/http_get.cpp), plus `extra` lines.
  static std::string post(const std::string& target, const std::string& extra = "") {
    return "POST " + target + " HTTP/1.0\r\nHost: localhost\r\nX-Nxdns-Request: 1\r\nContent-Length: 0\r\n" + extra +
           "\r\n";
  }
  void start_counting() {
    start({{"/act", [this](const std::map<std::string, std::string>&) {
              ++calls;
              Response r;
              r.body = "done\n";
              return r;
            }}});
  }
  std::unique_ptr<test::LoopHttpClient> fetch(const std::string& request) {
    auto c = std::make_unique<test::LoopHttpClient>(base.get(), server->local(), request);
    if (!driver->until([&] { return c->done(); }, 3000)) FAIL("timed out waiting for the HTTP response");
    return c;
  }
};

TEST(HttpPost, PostFromLoopbackRunsTheActionWithItsArguments) {
  start({{"/act", [this](const std::map<std::string, std::string>& args) {
            ++calls;
            seen_args = args;
            Response r;
            r.body = "done\n";
            return r;
          }}});
  auto c = fetch(post("/act?name=www.Example.test"));
  LONGS_EQUAL(200, c->status());
  LONGS_EQUAL(1, calls);
  STRCMP_EQUAL("www.Example.test", seen_args["name"].c_str());
  for (const char* m : {"GET", "HEAD", "PUT"}) {
    auto g = fetch(test::get_request("/act", m));
    LONGS_EQUAL_TEXT(405, g->status(), m);
    STRCMP_EQUAL_TEXT("POST", g->header("Allow").c_str(), m);
  }
  LONGS_EQUAL(1, calls);
}

TEST(HttpPost, FlushRouteEmptiesTheCache) {
  test::FakeScheduler sched;
  std::vector<upstream::EntrySpec> specs;
  auto t = std::make_unique<test::FakeTransport>();
  test::FakeTransport* fake = t.get();
  specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
  upstream::Pool pool(sched, std::move(specs), upstream::PoolOptions{});
  cache::CachingPool cache(sched, pool, cache::CacheOptions{});
  // One answer in the cache: a query, and an answer with one A record.
  dns::Bytes q = dns::make_query(1, *dns::name_from_text("www.example.test"), 1, {});
  auto p = dns::parse_query(q);
  cache.submit(*p.query, q, [](upstream::PoolOutcome&&) {});
  fake->respond_oldest([](const dns::Bytes& query) {
    dns::Bytes b = query;
    b[2] = 0x81, b[3] = 0x80, b[7] = 1;
    for (std::uint8_t x : {0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0x01, 0x2C, 0, 4, 192, 0, 2, 1}) b.push_back(x);
    return b;
  });
  sched.run_ready();
  CHECK_EQUAL(1u, cache.stats().entries);

  start(web::daemon_post_routes(&cache));
  auto bad = fetch(post("/api/cache/flush?name=a..b"));
  LONGS_EQUAL(400, bad->status());
  auto one = fetch(post("/api/cache/flush?name=WWW.example.test"));
  LONGS_EQUAL(200, one->status());
  STRCMP_EQUAL("{\"name\":\"WWW.example.test\",\"flushed\":1}", one->body().c_str());
  CHECK_EQUAL(0u, cache.stats().entries);
  auto all = fetch(post("/api/cache/flush"));
  STRCMP_EQUAL("{\"flushed\":0}", all->body().c_str());

  server.reset();
  start(web::daemon_post_routes(nullptr));
  auto off = fetch(post("/api/cache/flush"));
  LONGS_EQUAL(409, off->status());
}

TEST(HttpPost, ASimpleCrossOriginPostIsRefused) {
  start_counting();
  // What a page on another site can send without a CORS preflight: a form
  // or fetch() with a text/plain body, and no custom header.
  auto form = fetch(
      "POST /act HTTP/1.0\r\nHost: localhost\r\nOrigin: http://rebind.example\r\nContent-Type: text/plain\r\n"
      "Content-Length: 2\r\n\r\nx=");
  LONGS_EQUAL(403, form->status());
  CHECK_TRUE(form->body().find("X-Nxdns-Request") != std::string::npos);
  // Without Origin too (a browser that sends none for a form post).
  auto bare = fetch("POST /act HTTP/1.0\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n");
  LONGS_EQUAL(403, bare->status());
  LONGS_EQUAL(0, calls);
}

TEST(HttpPost, AForeignOriginIsRefusedAndTheOwnOriginAllowed) {
  start_counting();
  auto foreign = fetch(post("/act", "Origin: http://rebind.example\r\n"));
  LONGS_EQUAL(403, foreign->status());
  auto null_origin = fetch(post("/act", "Origin: null\r\n"));
  LONGS_EQUAL(403, null_origin->status());
  LONGS_EQUAL(0, calls);
  // The status page's own origin: "http://" + the Host it was loaded from.
  auto own = fetch(post("/act", "Origin: http://localhost\r\n"));
  LONGS_EQUAL(200, own->status());
  LONGS_EQUAL(1, calls);
}

TEST(HttpPost, APreflightIsGrantedNothing) {
  start_counting();
  // The browser asks before sending a POST with a custom header; with no
  // Access-Control-Allow-* in the answer, it never sends the POST.
  auto c = fetch(
      "OPTIONS /act HTTP/1.0\r\nHost: localhost\r\nOrigin: http://rebind.example\r\n"
      "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: x-nxdns-request\r\n\r\n");
  LONGS_EQUAL(405, c->status());
  STRCMP_EQUAL("", c->header("Access-Control-Allow-Origin").c_str());
  STRCMP_EQUAL("", c->header("Access-Control-Allow-Headers").c_str());
  LONGS_EQUAL(0, calls);
}

TEST(HttpPost, AForeignHostIsMisdirectedBeforeAnyAction) {
  start_counting();
  auto c = fetch(
      "POST /act HTTP/1.0\r\nHost: rebind.example\r\nX-Nxdns-Request: 1\r\nOrigin: http://rebind.example\r\n"
      "Content-Length: 0\r\n\r\n");
  LONGS_EQUAL(421, c->status());
  LONGS_EQUAL(0, calls);
}
