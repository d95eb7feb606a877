// HandshakePacer under the fake clock: one step per loop turn, a FIFO line,
// answers that just arrived settle before the next step, a closed session
// leaves the line, and nothing is starved.
#include "upstream/handshake_pacer.hpp"

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "support/fake_scheduler.hpp"

#include <CppUTest/TestHarness.h>

using namespace std::chrono_literals;
using nxdns::upstream::HandshakePacer;

namespace {

// A session as the pacer sees it: asks for a turn, records the turns it got.
struct Session final : HandshakePacer::Stepper {
  Session(std::string n, std::vector<std::string>& log) : name(std::move(n)), journal(log) {}
  void on_handshake_turn() override {
    journal.push_back(name);
    if (on_turn) on_turn();
  }
  std::string name;
  std::vector<std::string>& journal;
  std::function<void()> on_turn;
};

}  // namespace

TEST_GROUP(HandshakePacer) {
  nxdns::test::FakeScheduler sched;
  std::vector<std::string> turns;

  // `first` takes this turn's step; the others queue behind it, in order.
  void line_up(HandshakePacer& p, Session& first, std::initializer_list<Session*> rest) {
    CHECK_TRUE(p.take_turn(first));
    for (Session* s : rest) CHECK_FALSE(p.take_turn(*s));
  }
};

TEST(HandshakePacer, TheFirstStepOfATurnRunsAtOnceTheRestWaitInLine) {
  HandshakePacer p(sched);
  Session a("a", turns), b("b", turns), c("c", turns);
  line_up(p, a, {&b, &c});
  LONGS_EQUAL(2, p.line_length());
  LONGS_EQUAL(2, p.deferred_total());
  CHECK_TRUE(turns.empty());  // never called back inside take_turn
  // Each later turn runs exactly one of them, in the order they asked.
  sched.advance(0ms);
  CHECK_TRUE((turns == std::vector<std::string>{"b", "c"}));
  LONGS_EQUAL(0, p.line_length());
}

TEST(HandshakePacer, OneStepPerTurn) {
  HandshakePacer p(sched);
  Session a("a", turns), b("b", turns), c("c", turns);
  line_up(p, a, {&b, &c});
  // A session whose turn comes asks nothing more of this turn: anyone else
  // asking in it waits.
  Session d("d", turns);
  b.on_turn = [&]() { CHECK_FALSE(p.take_turn(d)); };
  sched.advance(0ms);
  CHECK_TRUE((turns == std::vector<std::string>{"b", "c", "d"}));
}

TEST(HandshakePacer, AskingTwiceKeepsOnePlaceInLine) {
  HandshakePacer p(sched);
  Session a("a", turns), b("b", turns);
  CHECK_TRUE(p.take_turn(a));
  CHECK_FALSE(p.take_turn(b));
  CHECK_FALSE(p.take_turn(b));
  LONGS_EQUAL(1, p.line_length());
  LONGS_EQUAL(1, p.deferred_total());
  sched.advance(0ms);
  CHECK_TRUE((turns == std::vector<std::string>{"b"}));
}

TEST(HandshakePacer, AFreeTurnAfterTheLineEmptiedRunsAtOnce) {
  HandshakePacer p(sched);
  Session a("a", turns), b("b", turns);
  CHECK_TRUE(p.take_turn(a));
  sched.advance(0ms);  // a's turn ends; nobody waits
  CHECK_TRUE(p.take_turn(b));
  LONGS_EQUAL(0, p.deferred_total());
}

TEST(HandshakePacer, ASessionThatLeavesIsNeverCalledBack) {
  HandshakePacer p(sched);
  Session a("a", turns), b("b", turns), c("c", turns);
  line_up(p, a, {&b, &c});
  p.leave(b);
  CHECK_FALSE(p.waiting(b));
  CHECK_TRUE(p.waiting(c));
  sched.advance(0ms);
  CHECK_TRUE((turns == std::vector<std::string>{"c"}));
}

TEST(HandshakePacer, AStepThatClosesTheNextSessionInLineSkipsIt) {
  // A step may fail its session, and the transport may close another one
  // (close_all) from inside it: the pacer is consistent before it calls out.
  HandshakePacer p(sched);
  Session a("a", turns), b("b", turns), c("c", turns), d("d", turns);
  line_up(p, a, {&b, &c, &d});
  b.on_turn = [&]() { p.leave(c); };
  sched.advance(0ms);
  CHECK_TRUE((turns == std::vector<std::string>{"b", "d"}));
}

TEST(HandshakePacer, AnswersThatJustArrivedSettleBeforeTheNextStep) {
  HandshakePacer p(sched);
  Session a("a", turns), b("b", turns), c("c", turns);
  line_up(p, a, {&b, &c});
  // The next loop turn reads answers before its timers run: their zero-delay
  // deliveries go first, the line waits `settle`.
  p.hold_for_answers();
  sched.advance(0ms);
  CHECK_TRUE(turns.empty());
  sched.advance(HandshakePacer::settle - 1us);
  CHECK_TRUE(turns.empty());
  // (The fake clock runs every zero-delay turn that follows at once.)
  sched.advance(1us);
  CHECK_TRUE((turns == std::vector<std::string>{"b", "c"}));
}

TEST(HandshakePacer, ASteadyFlowOfAnswersCannotStarveTheLine) {
  // Answers read in every loop turn hold each step back once, never more:
  // every session in line gets its turn within a settle and a turn each.
  HandshakePacer p(sched);
  Session a("a", turns), b("b", turns), c("c", turns);
  line_up(p, a, {&b, &c});
  for (int i = 0; i < 10 && turns.size() < 2; ++i) {
    p.hold_for_answers();
    p.hold_for_answers();  // a second batch in the same turn adds nothing
    sched.advance(HandshakePacer::settle);
  }
  CHECK_TRUE((turns == std::vector<std::string>{"b", "c"}));
  CHECK_TRUE(sched.now() - nxdns::loop::TimePoint{std::chrono::seconds(1000)} <= 2 * HandshakePacer::settle);
}

TEST(HandshakePacer, AnswersWithNobodyInLineHoldNothing) {
  // The warm path: answers and no handshake waiting arm no timer.
  HandshakePacer p(sched);
  Session a("a", turns);
  p.hold_for_answers();
  LONGS_EQUAL(0, sched.pending());
  CHECK_TRUE(p.take_turn(a));
}
