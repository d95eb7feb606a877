// HttpServer: libmicrohttpd in epoll mode on the test's libevent loop. The
// clients run on the same loop (see loop_http_client.hpp), so everything a
// test observes happened in loop callbacks, as in the daemon.
#include "web/http_server.hpp"

#include <dirent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "support/loop_driver.hpp"
#include "web/loop_http_client.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using web::HttpServer;
using web::Response;

namespace {

std::size_t thread_count() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

}  // namespace

TEST_GROUP(HttpServer) {
  loop::EventBasePtr base;
  std::unique_ptr<test::LoopDriver> driver;
  std::unique_ptr<HttpServer> server;
  int metrics_calls = 0;

  void setup() override {
    // The handler-exception test logs a warning on purpose.
    log::set_sink([](log::Level, std::string_view, void*) {}, nullptr);
    base.reset(event_base_new());
    driver = std::make_unique<test::LoopDriver>(base.get());
  }
  void teardown() override {
    server.reset();
    driver.reset();
    base.reset();
    log::set_sink(nullptr, nullptr);
  }

  web::Routes routes() {
    web::Routes r;
    r["/metrics"] = [this] {
      ++metrics_calls;
      Response resp;
      resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
      resp.body = "x_total 1\n";
      return resp;
    };
    r["/boom"] = []() -> Response { throw std::runtime_error("handler exploded"); };
    return r;
  }

  void start(web::HttpServerOptions o = {}) {
    if (o.listen.len == 0) o.listen = *net::make_endpoint("127.0.0.1", 0);
    std::string why;
    server = HttpServer::start(base.get(), o, routes(), &why);
    if (!server) FAIL(why.c_str());
  }

  void run_until(const std::function<bool()>& pred, int ms, const char* what) {
    if (!driver->until(pred, ms)) FAIL((std::string("timed out waiting for ") + what).c_str());
  }
  void run_for(int ms) {
    driver->run_for(ms);
  }

  std::unique_ptr<test::LoopHttpClient> fetch(const std::string& request) {
    auto c = std::make_unique<test::LoopHttpClient>(base.get(), server->local(), request);
    run_until([&] { return c->done(); }, 3000, "the HTTP response");
    return c;
  }

  // A blocking socket that connects and sends part of a request, then
  // stalls: the slow scraper.
  loop::UniqueFd stalled_client(const std::string& partial) {
    const auto& ep = server->local();
    loop::UniqueFd fd(::socket(ep.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
    CHECK_TRUE(::connect(fd.get(), ep.sa(), ep.len) == 0);
    CHECK_TRUE(::send(fd.get(), partial.data(), partial.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(partial.size()));
    return fd;
  }
};

TEST(HttpServer, GetServesTheRouteWithItsContentType) {
  start();
  CHECK_TRUE(server->local().port() != 0);
  auto c = fetch(test::get_request("/metrics"));
  LONGS_EQUAL(200, c->status());
  STRCMP_EQUAL("text/plain; version=0.0.4; charset=utf-8", c->header("Content-Type").c_str());
  STRCMP_EQUAL("no-store", c->header("Cache-Control").c_str());
  STRCMP_EQUAL("x_total 1\n", c->body().c_str());
  LONGS_EQUAL(1, metrics_calls);
}

TEST(HttpServer, HeadSendsTheHeadersWithoutTheBody) {
  start();
  auto c = fetch(test::get_request("/metrics", "HEAD"));
  LONGS_EQUAL(200, c->status());
  STRCMP_EQUAL("10", c->header("Content-Length").c_str());
  STRCMP_EQUAL("", c->body().c_str());
}

TEST(HttpServer, UnknownPathIs404) {
  start();
  auto c = fetch(test::get_request("/nope"));
  LONGS_EQUAL(404, c->status());
  auto q = fetch(test::get_request("/metrics/extra"));
  LONGS_EQUAL(404, q->status());
  LONGS_EQUAL(0, metrics_calls);
}

TEST(HttpServer, OtherMethodsAre405WithAllow) {
  start();
  for (const char* m : {"POST", "PUT", "DELETE", "OPTIONS"}) {
    auto c = fetch(std::string(m) + " /metrics HTTP/1.0\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc");
    LONGS_EQUAL_TEXT(405, c->status(), m);
    STRCMP_EQUAL_TEXT("GET, HEAD", c->header("Allow").c_str(), m);
  }
  LONGS_EQUAL(0, metrics_calls);
}

TEST(HttpServer, HandlerExceptionBecomes500AndTheServerLivesOn) {
  start();
  auto c = fetch(test::get_request("/boom"));
  LONGS_EQUAL(500, c->status());
  auto d = fetch(test::get_request("/metrics"));
  LONGS_EQUAL(200, d->status());
}

TEST(HttpServer, StartsNoThread) {
  const std::size_t before = thread_count();
  start();
  auto c = fetch(test::get_request("/metrics"));
  LONGS_EQUAL(200, c->status());
  LONGS_EQUAL(before, thread_count());
}

TEST(HttpServer, StalledClientDelaysNeitherOtherClientsNorTheLoop) {
  web::HttpServerOptions o;
  o.connection_timeout_seconds = 1;
  start(o);
  loop::UniqueFd stalled = stalled_client("GET /metr");
  run_for(50);  // the server has accepted it and is waiting for the rest

  // A timer on the same loop fires on time while the stalled client sits
  // there: nothing blocks waiting for its bytes.
  bool fired = false;
  const auto armed = std::chrono::steady_clock::now();
  double late_ms = 0;
  loop::EventPtr timer(evtimer_new(
      base.get(), [](evutil_socket_t, short, void* arg) { *static_cast<bool*>(arg) = true; }, &fired));
  timeval tv{0, 20000};
  evtimer_add(timer.get(), &tv);
  run_until([&] { return fired; }, 1000, "the loop timer");
  late_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - armed).count() - 20;
  CHECK_TEXT(late_ms < 200, "loop timer delayed by the stalled HTTP client");

  auto c = fetch(test::get_request("/metrics"));
  LONGS_EQUAL(200, c->status());
  CHECK_TEXT(c->elapsed_ms() < 500, "a concurrent scrape waited for the stalled client");

  // The connection timeout reclaims the stalled connection.
  run_until(
      [&] {
        char b;
        const ssize_t n = ::recv(stalled.get(), &b, 1, MSG_DONTWAIT);
        return n == 0 || (n < 0 && errno != EAGAIN);
      },
      4000, "the stalled connection to be closed");
  run_until([&] { return server->current_connections() == 0; }, 1000, "no connection left");
}

TEST(HttpServer, ConnectionLimitHoldsAndFreesUp) {
  web::HttpServerOptions o;
  o.connection_limit = 2;
  o.connection_timeout_seconds = 1;
  start(o);
  loop::UniqueFd s1 = stalled_client("GET /");
  loop::UniqueFd s2 = stalled_client("GET /");
  run_until([&] { return server->current_connections() == 2; }, 1000, "two stalled connections");
  // A third client is not served while the two hold the limit (it waits in
  // the listen backlog)...
  auto c = std::make_unique<test::LoopHttpClient>(base.get(), server->local(), test::get_request("/metrics"));
  run_for(300);
  CHECK_TRUE(server->current_connections() <= 2);
  CHECK_FALSE(c->done());
  // ...and is served once the timeout reclaimed the stalled two. (MHD puts
  // its listener back only on a later run; without the extra run the
  // server does after closing connections, this waits forever.)
  run_until([&] { return c->done(); }, 4000, "the waiting client to be served");
  LONGS_EQUAL(200, c->status());
  auto d = fetch(test::get_request("/metrics"));
  LONGS_EQUAL(200, d->status());
}

TEST(HttpServer, BusyAddressIsAOneLineReason) {
  start();
  web::HttpServerOptions o;
  o.listen = server->local();
  std::string why;
  auto second = HttpServer::start(base.get(), o, routes(), &why);
  CHECK_TRUE(second == nullptr);
  CHECK_TRUE(why.find(server->local().to_string()) != std::string::npos);
  CHECK_TRUE(why.find('\n') == std::string::npos);
}

// The suite needs an IPv6 loopback (BoundSocket binds ::1, the browser test
// listens on it): without one this fails with the reason, as they do.
TEST(HttpServer, ServesOnIpv6Loopback) {
  web::HttpServerOptions o;
  o.listen = *net::make_endpoint("::1", 0);
  std::string why;
  server = HttpServer::start(base.get(), o, routes(), &why);
  CHECK_TEXT(server != nullptr, ("cannot listen on [::1]: " + why).c_str());
  auto c = fetch(test::get_request("/metrics"));
  LONGS_EQUAL(200, c->status());
}

TEST(HttpServer, AForeignHostIsMisdirectedOnEveryPath) {
  start();
  // A page whose own name now resolves to this server (DNS rebinding): the
  // browser sends the page's name as Host.
  for (const char* m : {"GET", "HEAD"}) {
    for (const char* path : {"/metrics", "/nope", "/boom"}) {
      auto c = fetch(test::get_request(path, m, "rebind.example:" + std::to_string(server->local().port())));
      LONGS_EQUAL_TEXT(421, c->status(), path);
      CHECK_TEXT(c->body().find("x_total") == std::string::npos, path);
    }
  }
  auto p = fetch("POST /metrics HTTP/1.0\r\nHost: rebind.example\r\nContent-Length: 0\r\n\r\n");
  LONGS_EQUAL(421, p->status());
  LONGS_EQUAL(0, metrics_calls);
  // Its own names are served, with or without the port.
  const std::string port = std::to_string(server->local().port());
  for (const std::string& host : {"127.0.0.1:" + port, std::string("127.0.0.1"), "localhost:" + port}) {
    auto c = fetch(test::get_request("/metrics", "GET", host));
    LONGS_EQUAL_TEXT(200, c->status(), host.c_str());
  }
  LONGS_EQUAL(3, metrics_calls);
}

TEST(HttpServer, HostlessHttp10IsServedAndABadHostIs400) {
  start();
  auto bare = fetch("GET /metrics HTTP/1.0\r\n\r\n");
  LONGS_EQUAL(200, bare->status());
  // HTTP/1.1 requires a Host; libmicrohttpd refuses it without asking us.
  auto v11 = fetch("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
  LONGS_EQUAL(400, v11->status());
  auto two = fetch("GET /metrics HTTP/1.0\r\nHost: localhost\r\nHost: rebind.example\r\n\r\n");
  LONGS_EQUAL(400, two->status());
  auto unbracketed = fetch(test::get_request("/metrics", "GET", "::1"));
  LONGS_EQUAL(400, unbracketed->status());
  LONGS_EQUAL(1, metrics_calls);
}

TEST(HttpServer, AllowedHostsAreServedAndChangeInPlace) {
  web::HttpServerOptions o;
  o.allowed_hosts.names = {"pi.home.arpa"};
  start(o);
  auto c = fetch(test::get_request("/metrics", "GET", "Pi.Home.Arpa:8053"));
  LONGS_EQUAL(200, c->status());
  server->set_allowed_hosts({});
  auto d = fetch(test::get_request("/metrics", "GET", "pi.home.arpa:8053"));
  LONGS_EQUAL(421, d->status());
  LONGS_EQUAL(1, metrics_calls);
}
