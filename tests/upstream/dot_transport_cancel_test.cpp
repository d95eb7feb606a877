// DotTransport's cancellation and teardown against the in-process TLS
// server: a cancel closes the session only when its query is on the wire
// (the siblings then follow the redial rule), a cancelled or destroyed
// exchange never completes, close_all() completes later, and a completion
// may destroy the transport.
#include "dns/message.hpp"
#include "log/log.hpp"
#include "upstream/dot_transport_fixture.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;
using upstream::ExchangeResult;

TEST_GROUP_BASE(DotTransportCancel, test::DotTransportFixture){};

TEST(DotTransportCancel, CancelOfSentExchangeClosesTheSession) {
  serve(silent());
  Outcome out;
  const auto id = start(out, 5, "cancel.example");
  run_until([&] { return server->queries() == 1; });
  LONGS_EQUAL(1, dot->stats().open_sessions);
  dot->cancel(id);
  LONGS_EQUAL(0, dot->stats().open_sessions);
  run_until([&] { return server->closed_by_client() == 1; });
  run_for(20);
  LONGS_EQUAL(0, out.calls);
  LONGS_EQUAL(0, dot->live_exchanges());
}

TEST(DotTransportCancel, CancelOfSentExchangeSendsSiblingsThroughTheRedialRule) {
  start_server();
  auto o = options(server->port());
  o.max_sessions = 1;
  make_transport(o);
  exchange_ok(1, "warm.example");  // the session is reused from here on
  server->behaviour().hold_until = 100;  // hold what comes next
  Outcome a, sibling;
  const auto id = start(a, 2, "a.example");
  start(sibling, 3, "sibling.example");
  run_until([&] { return server->queries() == 3; });
  server->behaviour().hold_until = 0;  // the redial's connection answers
  dot->cancel(id);
  run_until([&] { return sibling.calls > 0; });
  CHECK_TRUE(sibling.result.ok());
  CHECK_TRUE(answers_name(sibling.result.response, "sibling.example"));
  LONGS_EQUAL(0, a.calls);
  LONGS_EQUAL(1, dot->stats().redials);
  LONGS_EQUAL(1, dot->stats().reuse_recoveries);
  LONGS_EQUAL(2, server->accepts());
}

TEST(DotTransportCancel, CancelOfUnsentExchangeKeepsTheSession) {
  serve();
  exchange_ok(1, "warm.example");
  Outcome out;
  const auto id = start(out, 2, "never.example");
  dot->cancel(id);  // still queued: never reached TLS
  run_for(50);
  LONGS_EQUAL(0, out.calls);
  LONGS_EQUAL(1, server->queries());
  LONGS_EQUAL(1, dot->stats().open_sessions);
  exchange_ok(3, "after.example");
  LONGS_EQUAL(1, server->accepts());
}

TEST(DotTransportCancel, CancelOfAnAnsweredExchangeSuppressesItsCompletion) {
  test::DotTestServer::Behaviour b;
  b.hold_until = 2;  // both answers, in reverse order, in one record
  start_server(b);
  auto o = options(server->port());
  o.max_sessions = 1;
  make_transport(o);
  Outcome first;
  const auto first_id = start(first, 1, "first.example");
  int second_calls = 0;
  const dns::Bytes q = query_for(2, "second.example");
  dot->start(q, [&](ExchangeResult&& r) {
    ++second_calls;
    CHECK_TRUE(r.ok());
    // The first answer is already in hand, its completion queued behind
    // this one: a cancel now must still keep it from ever running.
    dot->cancel(first_id);
  });
  run_until([&] { return second_calls > 0; });
  run_for(30);
  LONGS_EQUAL(1, second_calls);
  LONGS_EQUAL(0, first.calls);
  LONGS_EQUAL(2, server->answers());
  // Nothing was on the wire any more: the session stays.
  LONGS_EQUAL(1, dot->stats().open_sessions);
}

TEST(DotTransportCancel, CloseAllCompletesOutstandingWithCancelledLater) {
  serve(silent());
  Outcome out[3];
  for (int i = 0; i < 3; ++i) start(out[i], 1, log::cat("closeall", i, ".example"));
  run_until([&] { return server->queries() == 3; });
  dot->close_all();
  for (const auto& x : out) LONGS_EQUAL(0, x.calls);  // not from inside close_all()
  LONGS_EQUAL(0, dot->stats().open_sessions);
  run_until([&] { return out[0].calls + out[1].calls + out[2].calls == 3; });
  for (const auto& x : out) LONGS_EQUAL(static_cast<int>(Cause::cancelled), static_cast<int>(x.result.cause));
  run_until([&] { return server->close_notify_from_client() == 1; });
}

TEST(DotTransportCancel, DestructionRunsNoCompletion) {
  serve(silent());
  Outcome out;
  start(out, 1, "gone.example");
  run_until([&] { return server->queries() == 1; });
  Outcome queued;
  start(queued, 2, "queued.example");
  dot.reset();
  run_for(50);
  LONGS_EQUAL(0, out.calls);
  LONGS_EQUAL(0, queued.calls);
}

TEST(DotTransportCancel, CompletionMayDestroyTheTransport) {
  serve();
  Outcome second;
  const dns::Bytes q = query_for(1, "first.example");
  // Two answers due in the same flush; the first one's completion destroys
  // the transport: the second must not run (nor crash).
  int calls = 0;
  dot->start(q, [&](ExchangeResult&&) {
    ++calls;
    dot.reset();
  });
  dot->start(q, [&](ExchangeResult&&) { ++calls; });
  run_until([&] { return calls > 0; });
  run_for(20);
  LONGS_EQUAL(1, calls);
}
