// What becomes of a DoT exchange when a session carrying one of its copies
// ends, as a table: every row names the situation it stands for, so a
// failing row says which promise broke.
#include "upstream/exchange_fate.hpp"

#include <set>
#include <string>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::upstream::CarriedCopy;
using nxdns::upstream::Cause;
using nxdns::upstream::Copies;
using nxdns::upstream::Copy;
using nxdns::upstream::Fate;
using nxdns::upstream::SessionEnding;
using nxdns::upstream::Spent;

namespace {

// A copy placed on a session that was already up and had answered 4, and
// one placed on a session dialled for it (or for a burst it joined).
constexpr Copy on_reused{0, true, 4};
constexpr Copy on_fresh{0, false, 0};

CarriedCopy written(Copy c) { return CarriedCopy{c, true, false, false}; }
CarriedCopy queued(Copy c) { return CarriedCopy{c, false, false, false}; }
CarriedCopy with_other_copy(CarriedCopy c) {
  c.other_copy_alive = true;
  return c;
}
CarriedCopy sibling_was_culprit(CarriedCopy c) {
  c.sibling_culprit = true;
  return c;
}

// An established session that ended after delivering `responses` answers.
SessionEnding ended(Cause cause, std::uint64_t responses, bool partial_frame = false) {
  return SessionEnding{true, cause, partial_frame, responses};
}
SessionEnding dial_failed(Cause cause) { return SessionEnding{false, cause, false, 0}; }

constexpr Spent nothing_spent{};
constexpr Spent redial_spent{true, false, false, 0};
constexpr Spent resent{false, true, false, 0};
Spent replaced(unsigned n) { return Spent{false, false, false, n}; }

constexpr bool others_up = true;
constexpr bool nothing_else_up = false;

struct Row {
  const char* situation;
  CarriedCopy carried;
  Spent spent;
  SessionEnding how;
  bool others_up;
  Fate expected;
};

const Row rows[] = {
    // keep: the exchange lives while either copy does.
    {"hedge copy's session closed by the server: the original carries on",
     with_other_copy(written(on_reused)), nothing_spent, ended(Cause::eof, 6), others_up, Fate::keep},
    {"re-sent exchange's serial session torn down: its duplicate carries on",
     with_other_copy(written(on_reused)), resent, ended(Cause::session_closed, 4), others_up, Fate::keep},
    {"original queued on a dial that failed with nothing else up: its copy carries on",
     with_other_copy(queued(on_fresh)), nothing_spent, dial_failed(Cause::connect_failed), nothing_else_up,
     Fate::keep},
    {"stale reused session closed before answering anything, a copy elsewhere: no redial, the copy carries on",
     with_other_copy(written(on_reused)), nothing_spent, ended(Cause::eof, 4), others_up, Fate::keep},
    {"its own answer was bad, a copy elsewhere: the copy carries on",
     with_other_copy(written(on_reused)), nothing_spent, ended(Cause::bad_response, 4), others_up, Fate::keep},

    // place_again: never written, so the server never saw it.
    {"never written on an established session that closed: placed again",
     queued(on_reused), nothing_spent, ended(Cause::eof, 4), nothing_else_up, Fate::place_again},
    {"never written, placed again once already: once more",
     queued(on_reused), replaced(1), ended(Cause::connection_reset, 4), nothing_else_up, Fate::place_again},
    {"never written on a failed dial while another session is up: placed again",
     queued(on_fresh), nothing_spent, dial_failed(Cause::connect_failed), others_up, Fate::place_again},
    {"never written on a session torn down for a sibling's bad answer: placed again",
     sibling_was_culprit(queued(on_reused)), nothing_spent, ended(Cause::bad_response, 4), nothing_else_up,
     Fate::place_again},
    {"never written, its redial spent: placed again all the same",
     queued(on_reused), redial_spent, ended(Cause::tls_protocol, 4), nothing_else_up, Fate::place_again},

    // final, from a failed dial: the upstream's answer.
    {"never written on a failed dial with nothing else up: the failed dial is the answer",
     queued(on_fresh), nothing_spent, dial_failed(Cause::connect_failed), nothing_else_up, Fate::final},
    {"never written on a dial whose certificate check failed, nothing else up: final",
     queued(on_fresh), nothing_spent, dial_failed(Cause::certificate), nothing_else_up, Fate::final},
    {"never written on a failed dial, placed again twice already, another session up: final",
     queued(on_fresh), replaced(2), dial_failed(Cause::handshake_failed), others_up, Fate::final},
    {"dial reset during its handshake under a copy that looks reused: final, a failed dial never redials",
     queued(Copy{0, true, 0}), replaced(2), dial_failed(Cause::connection_reset), nothing_else_up, Fate::final},

    // requeue: the connection answered others after it was placed, then closed.
    {"server closed after answering others placed with it (per-connection limit): requeued",
     written(on_reused), nothing_spent, ended(Cause::eof, 6), nothing_else_up, Fate::requeue},
    {"session dialled for another exchange's burst answered others, then reset: requeued, not final",
     written(on_fresh), nothing_spent, ended(Cause::connection_reset, 1), nothing_else_up, Fate::requeue},
    {"answered others, then closed, its redial spent: requeued all the same (paid for by the answers)",
     written(on_reused), redial_spent, ended(Cause::tls_closed, 5), nothing_else_up, Fate::requeue},
    {"answered others, then torn down for a sibling's bad answer: requeued as session_closed",
     sibling_was_culprit(written(on_reused)), nothing_spent, ended(Cause::bad_response, 5), nothing_else_up,
     Fate::requeue},
    {"answered others, then closed on purpose while still carrying it: requeued",
     written(on_reused), nothing_spent, ended(Cause::ok, 5), nothing_else_up, Fate::requeue},
    {"never written, placed again twice already, on a session that answered others then closed: requeued",
     queued(on_reused), replaced(2), ended(Cause::eof, 5), nothing_else_up, Fate::requeue},

    // redial: the one-redial rule (retry_decision.hpp).
    {"stale reused session closed before answering anything: one redial",
     written(on_reused), nothing_spent, ended(Cause::eof, 4), others_up, Fate::redial},
    {"stale reused session reset before answering anything, nothing else up: one redial",
     written(on_reused), nothing_spent, ended(Cause::connection_reset, 4), nothing_else_up, Fate::redial},
    {"reused session torn down for a sibling's bad answer before answering anything after it: one redial",
     sibling_was_culprit(written(on_reused)), nothing_spent, ended(Cause::bad_response, 4), others_up,
     Fate::redial},
    {"reused session closed on purpose before answering it: one redial",
     written(on_reused), nothing_spent, ended(Cause::ok, 4), others_up, Fate::redial},
    {"never written, placed again twice already, stale reused session closed: one redial",
     queued(on_reused), replaced(2), ended(Cause::broken_pipe, 4), others_up, Fate::redial},

    // final, from an established session.
    {"stale again after its redial: final",
     written(on_reused), redial_spent, ended(Cause::eof, 4), others_up, Fate::final},
    {"session dialled for it closed before answering anything: final (the strict rule)",
     written(on_fresh), nothing_spent, ended(Cause::eof, 0), others_up, Fate::final},
    {"reused session closed with part of an answer buffered: final",
     written(on_reused), nothing_spent, ended(Cause::eof, 4, true), others_up, Fate::final},
    {"answered others, then closed with part of an answer buffered: final, not requeued",
     written(on_reused), nothing_spent, ended(Cause::eof, 6, true), others_up, Fate::final},
    {"its own answer was bad: final",
     written(on_reused), nothing_spent, ended(Cause::bad_response, 4), others_up, Fate::final},
    {"its own answer was bad after the session answered others: final, not requeued",
     written(on_reused), nothing_spent, ended(Cause::bad_response, 6), others_up, Fate::final},
    {"TLS alert on a reused session that answered others: final",
     written(on_reused), nothing_spent, ended(Cause::tls_protocol, 6), others_up, Fate::final},
};

}  // namespace

TEST_GROUP(ExchangeFate){};

TEST(ExchangeFate, EveryRow) {
  // Every row is judged, and every wrong one named, before the test fails.
  std::string wrong;
  for (const Row& r : rows) {
    const Fate got = fate(r.carried, r.spent, r.how, r.others_up);
    if (got == r.expected) continue;
    wrong += nxdns::log::cat("\n  ", r.situation, ": gave ", describe(got), ", want ", describe(r.expected));
  }
  if (!wrong.empty()) FAIL(wrong.c_str());
}

TEST(ExchangeFate, TheTableReachesEveryFate) {
  std::set<Fate> seen;
  for (const Row& r : rows) seen.insert(r.expected);
  LONGS_EQUAL(5, seen.size());
}

TEST(ExchangeFate, AnEstablishedSessionsFailureIsSessionClosedUnlessItWasThisExchangesOwn) {
  const auto cause = [](const CarriedCopy& c, const SessionEnding& how) {
    return static_cast<int>(failure_cause(c, how));
  };
  LONGS_EQUAL(static_cast<int>(Cause::bad_response), cause(written(on_reused), ended(Cause::bad_response, 4)));
  LONGS_EQUAL(static_cast<int>(Cause::session_closed),
              cause(sibling_was_culprit(written(on_reused)), ended(Cause::bad_response, 4)));
  LONGS_EQUAL(static_cast<int>(Cause::session_closed), cause(written(on_reused), ended(Cause::ok, 4)));
  LONGS_EQUAL(static_cast<int>(Cause::eof), cause(written(on_reused), ended(Cause::eof, 4)));
}

TEST_GROUP(ExchangeCopies){};

TEST(ExchangeCopies, NeverMoreThanTwoAndNeverTwoOnOneSession) {
  Copies copies(Copy{3, true, 1});
  CHECK_TRUE(copies.only_on(3));
  CHECK_FALSE(copies.add(Copy{3, false, 0}));
  CHECK_TRUE(copies.add(Copy{5, false, 0}));
  CHECK_FALSE(copies.only_on(3));
  CHECK_FALSE(copies.add(Copy{6, false, 0}));
  LONGS_EQUAL(2, copies.size());
}

TEST(ExchangeCopies, WhenTheFirstGoesTheOtherCarriesOnWithItsOwnHistory) {
  Copies copies(Copy{3, true, 1});
  CHECK_TRUE(copies.add(Copy{5, false, 7}));
  copies.remove(3);
  CHECK_TRUE(copies.only_on(5));
  CHECK_FALSE(copies[0].reused);
  LONGS_EQUAL(7, copies[0].answers_before);
  CHECK(copies.on(3) == nullptr);
}

TEST(ExchangeCopies, WhenTheSecondGoesTheFirstStays) {
  Copies copies(Copy{3, true, 1});
  CHECK_TRUE(copies.add(Copy{5, false, 7}));
  copies.remove(5);
  CHECK_TRUE(copies.only_on(3));
  CHECK_TRUE(copies[0].reused);
  copies.remove(4);  // not there: nothing changes
  CHECK_TRUE(copies.only_on(3));
  copies.remove_at(0);
  CHECK_TRUE(copies.empty());
}
