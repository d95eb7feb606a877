// DotTransport's placement against the in-process TLS server: pipelined
// exchanges answered out of order, a cold burst spread over sessions dialled
// in parallel, a warm burst kept on open sessions, a burst riding the one
// open session with headroom dialled after it. (The placement decision
// itself, as a pure function, is dot_placement_test.cpp.)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dns/message.hpp"
#include "log/log.hpp"
#include "upstream/dot_placement.hpp"
#include "upstream/dot_session.hpp"
#include "upstream/dot_transport_fixture.hpp"
#include "upstream/transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;

TEST_GROUP_BASE(DotTransportPlacement, test::DotTransportFixture){};

TEST(DotTransportPlacement, PipelinedExchangesAnsweredOutOfOrderReachTheirCallers) {
  test::DotTestServer::Behaviour b;
  b.hold_until = 8;  // answer all eight in reverse order
  start_server(b);
  auto o = options(server->port());
  o.max_sessions = 1;
  make_transport(o);

  constexpr int n = 8;
  Outcome out[n];
  // Every client uses the same ID: only the wire IDs keep them apart.
  for (int i = 0; i < n; ++i) start(out[i], 0x7777, log::cat("pipe", i, ".example"));
  run_until_all(out);
  for (int i = 0; i < n; ++i) {
    LONGS_EQUAL(1, out[i].calls);
    CHECK_TRUE(out[i].result.ok());
    LONGS_EQUAL(0x7777, dns::get_id(out[i].result.response));
    CHECK_TRUE(answers_name(out[i].result.response, log::cat("pipe", i, ".example")));
  }
  LONGS_EQUAL(1, server->accepts());
  LONGS_EQUAL(8, server->queries_on(0));
  // The eight wire IDs were distinct.
  std::vector<std::uint16_t> ids;
  for (const auto& q : server->received()) ids.push_back(dns::get_id(q.wire));
  std::sort(ids.begin(), ids.end());
  CHECK_TRUE(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

TEST(DotTransportPlacement, ColdBurstSpreadsAndItsFirstSessionUpCarriesACopyOfTheRest) {
  serve();
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("burst", i, ".example"));
  run_until_all(out);
  for (int i = 0; i < n; ++i) {
    CHECK_TRUE(out[i].result.ok());
    CHECK_TRUE(answers_name(out[i].result.response, log::cat("burst", i, ".example")));
  }
  run_until_dials_done();
  // The burst spread over as many sessions as the placement depth asks for
  // (dialed in parallel), never more than the slots: a serial upstream
  // answers each session's short line.
  const std::size_t expected = std::min<std::size_t>(upstream::slots_per_entry,
                                                     (n + upstream::dot_spread_depth - 1) / upstream::dot_spread_depth);
  CHECK_TRUE(expected > 1);
  LONGS_EQUAL(expected, server->accepts());
  LONGS_EQUAL(expected, dot->stats().connections_new);
  // No verdict yet: the first session up also carried a copy of every
  // exchange still waiting on the other handshakes (hedge_onto()), so a
  // pipelining upstream answers the whole burst one round trip after that
  // one handshake. Each of the others carried only its own spread line.
  const std::size_t others = (expected - 1) * upstream::dot_spread_depth;
  LONGS_EQUAL(others, dot->hedged());
  LONGS_EQUAL(others, dot->stats().hedged);
  LONGS_EQUAL(0, dot->resent());
  std::size_t carried_all = 0;
  for (std::size_t c = 0; c < server->connection_count(); ++c) {
    if (server->queries_on(c) == static_cast<std::size_t>(n)) {
      ++carried_all;
      continue;
    }
    CHECK_TRUE(server->queries_on(c) <= upstream::dot_spread_depth);
  }
  LONGS_EQUAL(1, carried_all);
  // At most one copy more per hedged exchange (an original still queued
  // when its copy's answer came was taken back).
  CHECK_TRUE(server->queries() >= static_cast<std::size_t>(n));
  CHECK_TRUE(server->queries() <= n + others);
}

TEST(DotTransportPlacement, AColdBurstsHandshakesTakeTheLoopOneStepAtATime) {
  // The spread's dials compute their key shares, and later their key
  // agreement and certificate checks, one loop turn apart
  // (handshake_pacer.hpp): the first session's hello is not held behind the
  // others' key shares, and its answers are not held behind their
  // certificate checks. Every one of the burst's sessions but the first
  // waited for a turn at least once (its ClientHello), and nothing was lost
  // to the waiting.
  serve();
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("paced", i, ".example"));
  const std::size_t dials = (n + upstream::dot_spread_depth - 1) / upstream::dot_spread_depth;
  LONGS_EQUAL(dials - 1, dot->handshake_steps_deferred());
  run_until_all(out);
  for (int i = 0; i < n; ++i) {
    CHECK_TRUE(out[i].result.ok());
    CHECK_TRUE(answers_name(out[i].result.response, log::cat("paced", i, ".example")));
  }
  run_until_dials_done();
  LONGS_EQUAL(dials, dot->stats().connections_new);
}

TEST(DotTransportPlacement, WarmBurstStaysOnOpenSessions) {
  serve();
  // Open sessions with a cold burst, then run a second one on them.
  constexpr int n = 30;
  Outcome cold[n], warm[n];
  for (int i = 0; i < n; ++i) start(cold[i], 1, log::cat("cold", i, ".example"));
  run_until_all(cold);
  run_until_dials_done();
  for (int i = 0; i < n; ++i) start(warm[i], 2, log::cat("warm", i, ".example"));
  run_until_all(warm);
  for (const auto& x : warm) CHECK_TRUE(x.result.ok());
  const std::size_t opened = dot->stats().connections_new;
  CHECK_TRUE(opened > 1);
  LONGS_EQUAL(opened, server->accepts());  // no new dial for the warm burst
  LONGS_EQUAL(n, dot->stats().exchanges_reused);
}

TEST(DotTransportPlacement, BurstAfterOneQueryPipelinesOnTheOpenSession) {
  // The household's usual state (one session kept open by a
  // trickle of queries). The burst rides that session in one round trip;
  // sessions dialled meanwhile are headroom and carry nothing.
  serve();
  exchange_ok(1, "first.example");
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("one", i, ".example"));
  run_until_all(out);
  for (const auto& x : out) CHECK_TRUE(x.result.ok());
  LONGS_EQUAL(n + 1, server->queries_on(0));
  LONGS_EQUAL(n + 1, server->queries());
  LONGS_EQUAL(n, dot->stats().exchanges_reused);
  LONGS_EQUAL(0, dot->resent());
  // Without a verdict the headroom is what a spread would need.
  CHECK_TRUE(server->accepts() <= 1 + (n + upstream::dot_spread_depth - 1) / upstream::dot_spread_depth);
  // Thirty answers that came back together: the upstream pipelines.
  STRCMP_EQUAL("pipelining", describe(dot->verdict()));
  STRCMP_EQUAL("pipelining", describe(dot->stats().pipelining));
}

TEST(DotTransportPlacement, HeadroomIsDialledAfterTheBurstThatAskedForIt) {
  // With one open session, the burst placed on it is written
  // before any headroom session costs a socket, a connect and a TLS set-up
  // (a capture showed four such dials ahead of the burst's one write).
  // Placement runs inside start(); the write and the headroom dials run
  // from the loop, the write first (its socket is already writable).
  serve();
  exchange_ok(1, "first.example");
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("head", i, ".example"));
  auto not_closed = [&] {
    std::size_t k = 0;
    for (std::size_t i = 0; i < dot->session_count(); ++i) k += dot->session(i).state() != upstream::SessionState::closed;
    return k;
  };
  LONGS_EQUAL(1, not_closed());  // no headroom dialled inside start()
  run_until_all(out);
  for (const auto& x : out) CHECK_TRUE(x.result.ok());
  LONGS_EQUAL(n + 1, server->queries_on(0));  // the burst rode the open session
  // The headroom was still dialled, on the loop's next turn.
  run_until([&] { return not_closed() > 1; }, 5000, "the headroom dials");
}

TEST(DotTransportPlacement, CloseAllAlsoDropsAHeadroomDialStillPending) {
  // The guard of the test above: a transport closed (shutdown, reload)
  // between a burst's placement and the loop's next turn stays closed.
  serve();
  exchange_ok(1, "first.example");
  constexpr int n = 30;
  Outcome out[n];
  for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat("gone", i, ".example"));
  dot->close_all();
  run_for(100);
  for (std::size_t i = 0; i < dot->session_count(); ++i) {
    LONGS_EQUAL(static_cast<int>(upstream::SessionState::closed), static_cast<int>(dot->session(i).state()));
  }
  for (const auto& x : out) LONGS_EQUAL(static_cast<int>(Cause::cancelled), static_cast<int>(x.result.cause));
}

TEST(DotTransportPlacement, AfterAnIdleCloseAPipeliningUpstreamGetsHeadroomOnlyOnceTheBurstSessionIsUp) {
  // Sessions closed while idle: the verdict says the upstream
  // pipelines, so the burst rides the one session being dialled. A headroom
  // dial beside it would run its handshake at the same time on both ends
  // and the burst would wait for both; it waits until that session is up.
  serve();
  exchange_ok(1, "first.example");
  constexpr int n = 30;
  auto burst = [&](const char* tag, std::size_t* most_while_none_ready) {
    Outcome out[n];
    for (int i = 0; i < n; ++i) start(out[i], static_cast<std::uint16_t>(i), log::cat(tag, i, ".example"));
    run_until([&] {
      std::size_t opening = 0;
      bool ready = false;
      for (std::size_t i = 0; i < dot->session_count(); ++i) {
        const auto st = dot->session(i).state();
        ready = ready || st == upstream::SessionState::ready;
        opening += st != upstream::SessionState::closed;
      }
      if (!ready && most_while_none_ready) *most_while_none_ready = std::max(*most_while_none_ready, opening);
      for (const auto& x : out)
        if (x.calls == 0) return false;
      return true;
    });
    for (const auto& x : out) CHECK_TRUE(x.result.ok());
  };
  burst("warm", nullptr);
  run_until_dials_done();
  STRCMP_EQUAL("pipelining", describe(dot->verdict()));
  server->close_all_connections();
  run_until([&] { return dot->stats().open_sessions == 0; }, 2000, "the idle close to be noticed");
  const std::size_t accepts_before = server->accepts();
  std::size_t most = 0;
  burst("after-idle", &most);
  LONGS_EQUAL(1, most);  // one dial while nothing was up: the burst's own
  LONGS_EQUAL(n, server->queries_on(accepts_before));  // the burst rode it
  // The headroom is still dialled, once that session is up.
  run_until([&] { return server->accepts() > accepts_before + 1; }, 5000, "the deferred headroom dial");
}
