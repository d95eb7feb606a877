// DotTransport's recovery over the wire, against the in-process TLS server:
// a reused session the server closed costs exactly one redial, a response
// byte already received rules a second send out, and a server that closes
// every connection after one answer loses nothing pipelined behind it.
// These pin what the scripted scenarios cannot: a real server's close and
// partial frame as mbedTLS reports them. The same rules, and the rest of
// the second chances, run as fake-clock scenarios in
// dot_exchange_scenarios_test.cpp.
#include <cstdint>

#include "log/log.hpp"
#include "upstream/dot_transport_fixture.hpp"
#include "upstream/transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;

TEST_GROUP_BASE(DotTransportRecovery, test::DotTransportFixture){};

TEST(DotTransportRecovery, ServerCloseOnReusedSessionIsRecoveredByExactlyOneRedial) {
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 1;  // each connection answers one query, then drops the next
  serve(b);
  exchange_ok(1, "first.example");
  exchange_ok(2, "second.example");

  const auto st = dot->stats();
  LONGS_EQUAL(2, server->accepts());
  LONGS_EQUAL(1, st.redials);
  LONGS_EQUAL(1, st.reuse_recoveries);
  LONGS_EQUAL(2, st.connections_new);
  // Recovery is routine: nothing above debug.
  LONGS_EQUAL(0, logs->count(log::Level::warn, "") + logs->count(log::Level::error, ""));
  CHECK_TRUE(logs->count(log::Level::debug, "recovered") >= 1);
}

TEST(DotTransportRecovery, PrefixByteThenCloseOnReusedSessionIsFinalWithoutRedial) {
  test::DotTestServer::Behaviour b;
  b.prefix_byte_then_close_after = 1;
  serve(b);
  exchange_ok(1, "first.example");
  Outcome out;
  finish(out, 2, "second.example");
  CHECK_FALSE(out.result.ok());
  run_for(50);
  LONGS_EQUAL(1, server->accepts());
  LONGS_EQUAL(0, dot->stats().redials);
  LONGS_EQUAL(0, dot->stats().open_sessions);
}

TEST(DotTransportRecovery, ServerClosingAfterEachAnswerLosesNoPipelinedExchange) {
  // A server that ends every connection after one answer (a per-connection
  // query limit): the exchanges pipelined behind the answered one were never
  // on a reused session, yet they are routine churn, not failures.
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 1;
  start_server(b);
  auto o = options(server->port());
  o.max_sessions = 1;  // all six pipelined on one connection at a time
  make_transport(o);
  constexpr int n = 6;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("once", i, ".example"));
  run_until_all(out);
  for (int i = 0; i < n; ++i) {
    if (!out[i].result.ok()) {
      FAIL(log::cat("exchange ", i, ": ", describe(out[i].result.cause), ": ", out[i].result.detail).c_str());
    }
    CHECK_TRUE(answers_name(out[i].result.response, log::cat("once", i, ".example")));
  }
  LONGS_EQUAL(n, server->accepts());  // one connection per answer
  LONGS_EQUAL(5 + 4 + 3 + 2 + 1, dot->requeued());
  LONGS_EQUAL(dot->requeued(), dot->stats().requeued);
  LONGS_EQUAL(0, dot->stats().redials);  // the one redial stays unspent
  LONGS_EQUAL(0, logs->count(log::Level::warn, "") + logs->count(log::Level::error, ""));
}
