// DotTransport's idle sessions against the in-process TLS server: a peer
// close is noticed without a query, the server's edns-tcp-keepalive
// (RFC 7828) shortens the idle timeout or, at 0, drains the session, and the
// default idle timeout closes it politely.
#include <chrono>

#include "upstream/dot_transport_fixture.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

TEST_GROUP_BASE(DotTransportIdle, test::DotTransportFixture){};

TEST(DotTransportIdle, IdlePeerCloseIsNoticedWithoutAQuery) {
  serve();
  exchange_ok(1, "idle.example");
  LONGS_EQUAL(1, dot->stats().open_sessions);
  server->close_all_connections();
  run_until([&] { return dot->stats().open_sessions == 0; }, 2000, "the idle close to be noticed");
  LONGS_EQUAL(1, server->queries());
  // The next exchange dials afresh; nothing to redial.
  exchange_ok(2, "next.example");
  LONGS_EQUAL(2, server->accepts());
  LONGS_EQUAL(0, dot->stats().redials);
}

TEST(DotTransportIdle, ServerKeepaliveShortensTheIdleTimeout) {
  test::DotTestServer::Behaviour b;
  b.keepalive = 5;  // 500 ms: the client must close at ~400 ms
  serve(b);
  exchange_ok(1, "keepalive.example");
  const auto t0 = std::chrono::steady_clock::now();
  run_until([&] { return dot->stats().open_sessions == 0; }, 3000, "the keepalive idle close");
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK_TRUE(waited < std::chrono::milliseconds(2500));
  CHECK_TRUE(waited >= std::chrono::milliseconds(150));
  run_until([&] { return server->close_notify_from_client() == 1; });
}

TEST(DotTransportIdle, KeepaliveZeroDrainsTheSession) {
  test::DotTestServer::Behaviour b;
  b.keepalive = 0;
  serve(b);
  exchange_ok(1, "drain.example");
  run_until([&] { return dot->stats().open_sessions == 0; }, 1000, "the drain");
  exchange_ok(2, "again.example");
  LONGS_EQUAL(2, server->accepts());
}

TEST(DotTransportIdle, DefaultIdleTimeoutClosesTheSession) {
  start_server();
  auto o = options(server->port());
  o.idle_timeout = std::chrono::milliseconds(100);
  make_transport(o);
  exchange_ok(1, "idle.example");
  run_until([&] { return dot->stats().open_sessions == 0; }, 2000, "the idle timeout");
  run_until([&] { return server->close_notify_from_client() == 1; });
}
