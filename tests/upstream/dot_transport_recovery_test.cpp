// DotTransport's recovery against the in-process TLS server: exchanges never
// written on a failed dial are placed again (requeue), swallowed ones are
// re-sent once (resend), a reused session the server closed costs exactly
// one redial, and each limit of those rules holds (a redial that fails too,
// a response byte already received, a server that never answered).
#include <chrono>
#include <cstdint>

#include "log/log.hpp"
#include "support/emulation.hpp"
#include "upstream/dot_placement.hpp"
#include "upstream/dot_transport_fixture.hpp"
#include "upstream/transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;

TEST_GROUP_BASE(DotTransportRecovery, test::DotTransportFixture){};

TEST(DotTransportRecovery, ExchangesNeverWrittenOnAFailedDialArePlacedAgain) {
  // Exchanges queued on a fresh session whose dial fails
  // were never seen by the server; with another session of the upstream up
  // they are placed there, not failed (and not charged to its health).
  start_server();
  auto o = options(server->port());
  // Short, so the black-holed dials below fail fast; the first dial must
  // still complete its handshake, which qemu under load stretched past
  // 300 ms in a CI rehearsal.
  o.dial_timeout = std::chrono::milliseconds(test::emulated() ? 3000 : 300);
  make_transport(o);
  exchange_ok(1, "first.example");
  server->behaviour().black_hole = true;  // every later connection: TCP only, never TLS
  // More than one session's pipeline depth: the rest queue on sessions still
  // dialling, which all time out.
  constexpr int n = static_cast<int>(upstream::dot_pipeline_depth) + 8;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("later", i, ".example"));
  run_until_all(out);
  for (int i = 0; i < n; ++i) {
    if (!out[i].result.ok()) {
      FAIL(log::cat("exchange ", i, ": ", describe(out[i].result.cause), ": ", out[i].result.detail).c_str());
    }
  }
  CHECK_TRUE(server->accepts() > 1);  // the failed dials happened
  CHECK_TRUE(dot->requeued() >= 8);
  LONGS_EQUAL(n + 1, server->queries_on(0));
}

TEST(DotTransportRecovery, ExchangesNeverWrittenOnAFailedDialFailWhenNothingElseIsUp) {
  // The bound of the rule above: with no session up, a failed dial is the
  // upstream's answer, at once (no loop of dials until the budget).
  test::DotTestServer::Behaviour b;
  b.black_hole = true;
  start_server(b);
  auto o = options(server->port());
  o.dial_timeout = std::chrono::milliseconds(200);
  make_transport(o);
  Outcome out[3];
  for (int i = 0; i < 3; ++i) start(out[i], 1, log::cat("hole", i, ".example"));
  run_until([&] { return out[0].calls + out[1].calls + out[2].calls == 3; });
  for (const auto& x : out) LONGS_EQUAL(static_cast<int>(Cause::handshake_failed), static_cast<int>(x.result.cause));
  LONGS_EQUAL(1, server->accepts());
  LONGS_EQUAL(0, dot->requeued());
}

TEST(DotTransportRecovery, PartialAnswersAreResentOnceLongBeforeTheBudget) {
  // A frontend answering one query per coalesced write.
  // The exchanges it swallowed are re-sent once on fresh sessions, one
  // query on the wire per session, and all are answered.
  test::DotTestServer::Behaviour b;
  b.answer_first_of_batch = true;
  serve(b);
  exchange_ok(1, "first.example");
  constexpr int n = 12;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("part", i, ".example"));
  // Well inside a 2 s attempt budget (the stall deadline is ~100 ms here).
  run_until_all(out, 1500, "every answer");
  for (int i = 0; i < n; ++i) {
    if (!out[i].result.ok()) {
      FAIL(log::cat("exchange ", i, ": ", describe(out[i].result.cause), ": ", out[i].result.detail).c_str());
    }
    CHECK_TRUE(answers_name(out[i].result.response, log::cat("part", i, ".example")));
  }
  CHECK_TRUE(server->swallowed() >= 1);
  CHECK_TRUE(dot->resent() >= 1);
  CHECK_TRUE(dot->resent() <= static_cast<std::uint64_t>(n));  // never more than one duplicate each
  STRCMP_EQUAL("serial", describe(dot->verdict()));
}

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

TEST(DotTransportRecovery, RedialThatAlsoFailsIsFinal) {
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 1;
  serve(b);
  exchange_ok(1, "first.example");
  // From now on every connection drops its first query too.
  server->behaviour().close_on_query_after = 0;
  Outcome out;
  finish(out, 2, "second.example");
  CHECK_FALSE(out.result.ok());
  CHECK_TRUE(upstream::is_connection_lifecycle(out.result.cause));
  LONGS_EQUAL(2, server->accepts());  // the original and exactly one redial
  LONGS_EQUAL(1, dot->stats().redials);
  LONGS_EQUAL(0, dot->stats().reuse_recoveries);
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

TEST(DotTransportRecovery, ServerClosingBeforeAnyAnswerIsFinalNotRequeued) {
  // No answer on the connection: nothing shows the server works, so the
  // strict rule applies (fresh session: final), and nothing loops.
  test::DotTestServer::Behaviour b;
  b.close_on_query_after = 0;
  start_server(b);
  auto o = options(server->port());
  o.max_sessions = 1;
  make_transport(o);
  Outcome out[3];
  for (int i = 0; i < 3; ++i) start(out[i], 1, log::cat("never", i, ".example"));
  run_until([&] { return out[0].calls + out[1].calls + out[2].calls == 3; });
  for (const auto& x : out) {
    CHECK_FALSE(x.result.ok());
    CHECK_TRUE(upstream::is_connection_lifecycle(x.result.cause));
  }
  run_for(50);
  LONGS_EQUAL(1, server->accepts());
  LONGS_EQUAL(0, dot->requeued());
  LONGS_EQUAL(0, dot->stats().redials);
}
