// Operator actions on the HTTP surface: POST routes run for a loopback peer
// with the URL's query arguments; other methods on them are 405 (Allow:
// POST); and the real flush route empties a real cache.
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
  auto c = fetch("POST /act?name=www.Example.test HTTP/1.0\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
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
  auto bad = fetch("POST /api/cache/flush?name=a..b HTTP/1.0\r\nHost: t\r\n\r\n");
  LONGS_EQUAL(400, bad->status());
  auto one = fetch("POST /api/cache/flush?name=WWW.example.test HTTP/1.0\r\nHost: t\r\n\r\n");
  LONGS_EQUAL(200, one->status());
  STRCMP_EQUAL("{\"name\":\"WWW.example.test\",\"flushed\":1}", one->body().c_str());
  CHECK_EQUAL(0u, cache.stats().entries);
  auto all = fetch("POST /api/cache/flush HTTP/1.0\r\nHost: t\r\n\r\n");
  STRCMP_EQUAL("{\"flushed\":0}", all->body().c_str());

  server.reset();
  start(web::daemon_post_routes(nullptr));
  auto off = fetch("POST /api/cache/flush HTTP/1.0\r\nHost: t\r\n\r\n");
  LONGS_EQUAL(409, off->status());
}
