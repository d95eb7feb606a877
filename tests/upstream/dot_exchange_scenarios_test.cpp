// DotTransport's second chances as scenarios on the fake clock, over
// scripted sessions: the hedge of a cold burst, the re-send of a serial
// upstream's tail and of a stalled exchange, the requeue after a server
// closed a connection that was answering, the one redial of a stale reused
// session and its limits, and the fresh dial after an outage. Each checks
// where the copies went and that every caller got exactly one callback.
// What fate() decides per copy is table-tested in exchange_fate_test.cpp;
// the wire side of the same rules (real TLS, a real server closing) keeps
// a few tests in dot_transport_recovery_test.cpp.
#include <cstddef>
#include <cstdint>

#include "upstream/dot_placement.hpp"
#include "upstream/dot_scenario_fixture.hpp"
#include "upstream/transport.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;
using upstream::PipeliningVerdict;
using upstream::SessionState;
using test::ScriptedDotSession;

TEST_GROUP_BASE(DotExchangeScenarios, test::DotScenarioFixture){};

TEST(DotExchangeScenarios, AColdBurstsFirstSessionUpCarriesTheRestAndEveryCallerIsAnsweredOnce) {
  // No verdict yet: the burst spreads over two dials (the spread depth
  // each). Whichever handshake completes first takes a copy of what waits
  // on the other, and answers it all.
  const auto names = burst(2 * upstream::dot_spread_depth, "cold");
  turn();
  LONGS_EQUAL(upstream::dot_spread_depth, slot(0).load());
  LONGS_EQUAL(upstream::dot_spread_depth, slot(1).load());
  slot(1).up();
  turn();
  LONGS_EQUAL(upstream::dot_spread_depth, dot->hedged());
  LONGS_EQUAL(2 * upstream::dot_spread_depth, slot(1).on_wire().size());
  advance(10);
  slot(1).answer_all();
  turn();
  for (const auto* a : names) answered(*a);
  // The copies still waiting for the slower handshake were taken back: the
  // upstream never sees them.
  LONGS_EQUAL(0, slot(0).load());
  slot(0).up();
  turn();
  LONGS_EQUAL(0, slot(0).writes());
  LONGS_EQUAL(2 * upstream::dot_spread_depth, total_writes());
}

TEST(DotExchangeScenarios, AHedgeCopyLostWithItsSessionLeavesTheOriginalToAnswer) {
  const auto names = burst(2 * upstream::dot_spread_depth, "cold");
  turn();
  slot(0).up();
  turn();
  LONGS_EQUAL(upstream::dot_spread_depth, dot->hedged());
  // The first session up dies before answering anything: its own exchanges
  // were fresh (no redial spent on them? they are placed again), the hedge
  // copies simply go, and slot 1's originals carry on.
  slot(0).drop(Cause::tls_closed);
  turn();
  slot(1).up();
  turn();
  advance(10);
  slot(1).answer_all();
  turn();
  for (std::size_t i = upstream::dot_spread_depth; i < names.size(); ++i) answered(*names[i]);
  for (std::size_t i = 0; i < upstream::dot_spread_depth; ++i) LONGS_EQUAL(1, names[i]->calls);
}

TEST(DotExchangeScenarios, ASerialUpstreamsTailIsResentOnceAndTheFirstAnswerWins) {
  warm();
  // A burst on the open session: deep, as for an upstream that pipelines,
  // with headroom dialled on the next turn.
  const auto names = burst(12, "line");
  turn();
  LONGS_EQUAL(12, slot(0).on_wire().size());
  CHECK_TRUE(slot(1).open());
  // The server answers one query at a time, one service time apart: two
  // such answers are the serial verdict.
  for (int i = 0; i < 3; ++i) {
    advance(10);
    CHECK_TRUE(slot(0).answer(names[i]->id));
  }
  LONGS_EQUAL(static_cast<int>(PipeliningVerdict::serial), static_cast<int>(dot->verdict()));
  // Of the nine still in line, the ones past the spread depth got one
  // duplicate each on other sessions; the head of the line is next at the
  // server and stays where it is.
  const std::size_t head_end = 3 + upstream::dot_spread_depth;
  LONGS_EQUAL(12 - head_end, dot->resent());
  for (std::size_t i = 3; i < 12; ++i) LONGS_EQUAL(i < head_end ? 1 : 2, slots_carrying(*names[i]));
  up_dialled();
  answer_everywhere(10, &slot(0));
  for (std::size_t i = head_end; i < 12; ++i) answered(*names[i]);
  // The originals' answers come later and find no one waiting.
  advance(100);
  slot(0).answer_all();
  turn();
  for (const auto* a : names) answered(*a);
  LONGS_EQUAL(1 + 12 + (12 - head_end), total_writes());
}

TEST(DotExchangeScenarios, AnExchangeLeftBehindIsResentOnceOnAFreshSessionThatTakesOneAtATime) {
  ScriptedDotSession& first = warm(10);
  const std::size_t old_slot = first.index();
  const auto names = burst(3, "left");
  turn();
  // The two written with it are answered, in order; it is not.
  advance(10);
  CHECK_TRUE(first.answer(names[0]->id));
  CHECK_TRUE(first.answer(names[1]->id));
  turn();
  answered(*names[0]);
  answered(*names[1]);
  // Four fastest round trips (at least 100 ms) after the last answer, plus
  // the stall check's period.
  advance(200);
  LONGS_EQUAL(1, dot->resent());
  // The connection that left it behind is gone (its slot may be dialled
  // again for the re-send).
  CHECK_TRUE(!first.open() || first.dial_count() == 2);
  LONGS_EQUAL(static_cast<int>(PipeliningVerdict::serial), static_cast<int>(dot->verdict()));
  std::size_t fresh = slots.size();
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slot(i).carries(names[2]->id)) fresh = i;
  }
  CHECK_TRUE(fresh != slots.size());
  CHECK_TRUE(fresh != old_slot || slot(fresh).dial_count() == 2);
  LONGS_EQUAL(static_cast<int>(SessionState::connecting), static_cast<int>(slot(fresh).state()));
  slot(fresh).up();
  turn();
  advance(10);
  CHECK_TRUE(slot(fresh).answer(names[2]->id));
  turn();
  answered(*names[2]);
  LONGS_EQUAL(0, dot->stats().redials);
}

TEST(DotExchangeScenarios, AServerClosingAConnectionThatWasAnsweringLosesNothing) {
  ScriptedDotSession& s = warm();
  const auto names = burst(4, "req");
  turn();
  advance(10);
  CHECK_TRUE(s.answer(names[0]->id));
  CHECK_TRUE(s.answer(names[1]->id));
  // A server limiting queries per connection (RFC 7766 §6.2.4): it closes
  // after answering some. The rest are placed again without spending
  // their redial.
  s.drop(Cause::tls_closed);
  turn();
  LONGS_EQUAL(2, dot->requeued());
  LONGS_EQUAL(0, dot->stats().redials);
  up_dialled();
  answer_everywhere();
  for (const auto* a : names) answered(*a);
}

TEST(DotExchangeScenarios, AStaleReusedSessionCostsExactlyOneRedial) {
  ScriptedDotSession& s = warm();
  advance(20000);
  Asked& a = ask("stale.example");
  turn();
  CHECK_TRUE(s.carries(a.id));
  // The server had dropped the idle connection: the query reaches nothing.
  s.drop(Cause::tls_closed);
  turn();
  LONGS_EQUAL(1, dot->stats().redials);
  LONGS_EQUAL(2, s.dial_count());  // the same slot, freshly dialled
  CHECK_TRUE(s.carries(a.id));
  s.up();
  turn();
  advance(10);
  CHECK_TRUE(s.answer(a.id));
  turn();
  answered(a);
  LONGS_EQUAL(1, dot->stats().reuse_recoveries);
}

TEST(DotExchangeScenarios, ARedialThatFailsTooIsFinal) {
  ScriptedDotSession& s = warm();
  Asked& a = ask("stale.example");
  turn();
  s.drop(Cause::tls_closed);
  turn();
  LONGS_EQUAL(2, s.dial_count());
  s.up();
  turn();
  s.drop(Cause::tls_closed);
  turn();
  failed(a, Cause::tls_closed);
  LONGS_EQUAL(2, s.dial_count());  // no second redial
  LONGS_EQUAL(1, dot->stats().redials);
}

TEST(DotExchangeScenarios, AnAnswerBeganBeforeTheCloseSoNothingIsSentAgain) {
  // Once a response byte has arrived, a second send could duplicate work
  // the server did (retry_decision.hpp): final, no redial, no requeue.
  ScriptedDotSession& s = warm();
  Asked& a = ask("partial.example");
  turn();
  s.start_frame();
  s.drop(Cause::tls_closed);
  turn();
  LONGS_EQUAL(1, a.calls);
  CHECK_FALSE(a.result.ok());
  LONGS_EQUAL(0, dot->stats().redials);
  LONGS_EQUAL(0, dot->requeued());
  LONGS_EQUAL(1, s.dial_count());
}

TEST(DotExchangeScenarios, ExchangesNeverWrittenOnAFailedDialArePlacedAgainWhileAnotherSessionIsUp) {
  ScriptedDotSession& up = warm();
  // Past one session's pipeline depth: the rest wait on a dial.
  const auto names = burst(upstream::dot_pipeline_depth + 4, "more");
  turn();
  ScriptedDotSession* dialling = nullptr;
  for (ScriptedDotSession* c : slots) {
    if (c->state() == SessionState::connecting && c->load() > 0) dialling = c;
  }
  CHECK_TRUE(dialling != nullptr);
  const std::size_t waiting = dialling->load();
  dialling->drop(Cause::connect_failed);
  turn();
  LONGS_EQUAL(waiting, dot->requeued());
  up_dialled();
  for (int round = 0; round < 3; ++round) answer_everywhere();
  for (const auto* a : names) answered(*a);
  CHECK_TRUE(up.writes() > upstream::dot_pipeline_depth);
}

TEST(DotExchangeScenarios, AFailedDialWithNothingElseUpIsTheUpstreamsAnswerAtOnce) {
  const auto names = burst(3, "down");
  turn();
  slot(0).drop(Cause::connect_failed);
  turn();
  for (const auto* a : names) failed(*a, Cause::connect_failed);
  LONGS_EQUAL(1, slot(0).dial_count());
  for (std::size_t i = 1; i < slots.size(); ++i) LONGS_EQUAL(0, slot(i).dial_count());
}

TEST(DotExchangeScenarios, AfterAnOutageTheNextExchangeGoesOnAFreshDialAtOnce) {
  ScriptedDotSession& old = warm(10);
  const std::uint64_t old_dial = old.dial_count();
  // The path goes: two exchanges on the open session, never answered. Past
  // eight fastest round trips (at least 250 ms) both are silent stalls.
  const auto lost = burst(2, "lost");
  turn();
  advance(400);
  CHECK_TRUE(dot->outage_seen());
  advance(1500);
  const std::uint64_t dials_before = dot->outage_dials();
  Asked& back = ask("back.example");
  LONGS_EQUAL(dials_before + 1, dot->outage_dials());
  CHECK_FALSE(old.carries(back.id) && old.dial_count() == old_dial);
  // The fresh dial's handshake is the path's return: it carries the new
  // exchange and what waited through the outage.
  up_dialled();
  // The connection from before stays silent (its path is gone for good).
  answer_everywhere(10, old.dial_count() == old_dial ? &old : nullptr);
  answered(back);
  for (const auto* a : lost) answered(*a);
  CHECK_FALSE(dot->outage_seen());
}

TEST(DotExchangeScenarios, OneStragglerOnAPipeliningUpstreamGetsADuplicateAndTheSessionStays) {
  // Answers that overtake earlier queries prove the upstream pipelines; one
  // slow query among them is a resolver's cache miss, not a frontend that
  // drops queries: it gets its one duplicate elsewhere, nothing closes.
  ScriptedDotSession& s = warm(10);
  const auto names = burst(4, "pipe");
  turn();
  answer_reversed(s, {names[1], names[2], names[3]});
  LONGS_EQUAL(static_cast<int>(PipeliningVerdict::pipelining), static_cast<int>(dot->verdict()));
  advance(200);
  LONGS_EQUAL(1, dot->resent());
  LONGS_EQUAL(2, slots_carrying(*names[0]));
  CHECK_TRUE(s.established());
  LONGS_EQUAL(1, s.dial_count());
  up_dialled();
  answer_everywhere(10, &s);
  for (const auto* a : names) answered(*a);
}

TEST(DotExchangeScenarios, AFreshConnectionClosedBeforeAnyAnswerFailsWhatItCarried) {
  // Dialled for these exchanges, it never answered one: not stale reuse
  // (no redial) and not a server limiting queries per connection (no
  // requeue). The server's close is its answer.
  const auto names = burst(2, "fresh");
  turn();
  slot(0).up();
  turn();
  slot(0).drop(Cause::tls_closed);
  turn();
  for (const auto* a : names) failed(*a, Cause::tls_closed);
  LONGS_EQUAL(0, dot->requeued());
  LONGS_EQUAL(0, dot->stats().redials);
  LONGS_EQUAL(1, slot(0).dial_count());
}

TEST(DotExchangeScenarios, AColdBurstAfterAPipeliningVerdictRidesOneDialWithNoCopies) {
  ScriptedDotSession& s = warm(10);
  const auto first = burst(3, "first");
  turn();
  answer_reversed(s, first);
  LONGS_EQUAL(static_cast<int>(PipeliningVerdict::pipelining), static_cast<int>(dot->verdict()));
  s.drop(Cause::ok, "idle");
  turn();
  const auto names = burst(2 * upstream::dot_spread_depth, "again");
  turn();
  std::size_t carrying = 0;
  for (ScriptedDotSession* c : slots) carrying += c->load() > 0;
  LONGS_EQUAL(1, carrying);
  up_dialled();
  LONGS_EQUAL(0, dot->hedged());
  answer_everywhere();
  for (const auto* a : names) answered(*a);
  LONGS_EQUAL(1 + 3 + names.size(), total_writes());
}
