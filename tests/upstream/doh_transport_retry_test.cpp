// DohTransport's one retry through a pool of one entry, against the loopback
// DoH fixture: a connection the server closed while idle costs one redial and
// no failure (HTTP/2 and HTTP/1.1), and so does one it reset; a fresh
// connection, or a reused one that had already delivered response bytes, is
// never retried.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "log/log.hpp"
#include "upstream/doh_transport_fixture.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;

TEST_GROUP_BASE(DohTransportRetry, test::DohPoolFixture) {
  // Two queries through nghttpx (HTTP/2) behind a relay that ends the
  // connection, idle for 300 ms, when the second request arrives (relay
  // flag `how`). The second must answer `name`; both queries must count as ok, the upstream stays healthy.
  void query_across_idle_end(const char* how, const std::string& name) {
    const auto backend = start_fixture({}, true);
    const auto h2 = start_h2_front(backend);
    const auto port = start_relay(h2, 0, {how, "300"});
    make_pool(options(port));
    CHECK_TRUE(pool_query(1, "before-" + name).ok);
    run_for(600);
    const auto second = pool_query(2, name);
    if (!second.ok) FAIL(log::cat(how, ": ", describe(second.cause), ": ", second.detail).c_str());
    CHECK_TRUE(answers_name(second.response, name));
    STRCMP_EQUAL("HTTP/2", dp.doh->http_version().c_str());
    // Not the upstream's failure: no health mark, one attempt, both ok.
    const auto s = dp.snap();
    CHECK_TRUE(s.health == upstream::HealthState::healthy);
    LONGS_EQUAL(0, s.consecutive_failures);
    LONGS_EQUAL(2, s.outcomes[static_cast<std::size_t>(Cause::ok)]);
    LONGS_EQUAL(1, second.attempts);
  }
};

TEST(DohTransportRetry, Http2ConnectionClosedWhileIdleIsRecoveredByOneRedial) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  // The request went out on a reused connection and EOF comes back before
  // any answer byte. curl 7.88 fails the HTTP/2 stream; only our redial
  // saves the query.
  query_across_idle_end("--close-when-idle-ms", "after-idle.example");
  const auto st = dp.doh->stats();
  LONGS_EQUAL(2, st.connections_new);
  LONGS_EQUAL(1, st.redials);
  LONGS_EQUAL(1, st.reuse_recoveries);
}

TEST(DohTransportRetry, Http2ConnectionResetWhileIdleCostsNoFailure) {
  REQUIRE_FIXTURES();
  REQUIRE_NGHTTPX();
  // The other end of the same race: the server's kernel answers the request
  // with a RST. curl resends by itself when it reads ECONNRESET before any
  // byte (the transfer then counts a connect of its own), or fails the
  // stream when the send saw the reset first, and our redial resends it:
  // which one depends on the scheduler. Either way exactly one fresh
  // connection, and a redial only ever counted with its recovery.
  query_across_idle_end("--reset-when-idle-ms", "after-reset.example");
  const auto st = dp.doh->stats();
  UT_PRINT(log::cat("HTTP/2 idle reset: redials ", st.redials, ", recoveries ", st.reuse_recoveries,
                    ", connections ", st.connections_new)
               .c_str());
  LONGS_EQUAL(2, st.connections_new);
  CHECK_TRUE(st.redials <= 1);
  LONGS_EQUAL(st.redials, st.reuse_recoveries);
}

TEST(DohTransportRetry, Http1ConnectionClosedWhileIdleCostsNoFailureEither) {
  REQUIRE_FIXTURES();
  const auto backend = start_fixture();
  const auto port = start_relay(backend, 0, {"--close-when-idle-ms", "300"});
  make_pool(options(port));
  CHECK_TRUE(pool_query(1, "h1-before-idle.example").ok);
  run_for(600);
  const auto second = pool_query(2, "h1-after-idle.example");
  if (!second.ok) FAIL(log::cat("after idle close: ", describe(second.cause), ": ", second.detail).c_str());
  const auto st = dp.doh->stats();
  UT_PRINT(log::cat("HTTP/1.1 idle close: redials ", st.redials, ", recoveries ", st.reuse_recoveries,
                    ", connections ", st.connections_new)
               .c_str());
  // curl retries an HTTP/1.1 request that got nothing on a reused
  // connection by itself; either way at most the one redial, and it recovered.
  CHECK_TRUE(st.redials <= 1);
  LONGS_EQUAL(st.redials, st.reuse_recoveries);
  LONGS_EQUAL(0, dp.snap().consecutive_failures);
}

TEST(DohTransportRetry, NoRetryOnAFreshConnection) {
  REQUIRE_FIXTURES();
  // Half the body, then the connection closes (CURLE_PARTIAL_FILE: eof, a
  // lifecycle cause), on the connection dialed for the exchange: final.
  const auto port = start_fixture({"--truncated-body"});
  make_transport(options(port));
  exchange_fails(Cause::eof, "cut-fresh.example");
  const auto st = doh->stats();
  LONGS_EQUAL(1, st.connections_new);
  LONGS_EQUAL(0, st.redials);
  LONGS_EQUAL(0, st.reuse_recoveries);
  expect_stat("requests", 1);  // sent exactly once
}

TEST(DohTransportRetry, NoRetryAfterResponseBytesOnAReusedConnection) {
  REQUIRE_FIXTURES();
  // The first answer whole; the second, on the reused connection, cut after
  // its headers and half its body: the server processed the query, so a
  // resend would be a second query, not a recovery.
  const auto port = start_fixture({"--truncate-after", "1"});
  make_transport(options(port));
  exchange_ok(1, "whole.example");
  exchange_fails(Cause::eof, "cut-reused.example");
  const auto st = doh->stats();
  LONGS_EQUAL(1, st.connections_new);
  LONGS_EQUAL(1, st.exchanges_reused);
  LONGS_EQUAL(0, st.redials);
  LONGS_EQUAL(0, st.reuse_recoveries);
  expect_stat("requests", 2);
}
