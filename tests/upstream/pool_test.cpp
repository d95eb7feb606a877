#include <memory>
#include <optional>
#include <vector>

#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using upstream::Cause;
using upstream::max_in_flight_per_entry;

namespace {

struct Harness {
  test::FakeScheduler sched;
  std::vector<test::FakeTransport*> fakes;  // by configuration index
  std::unique_ptr<upstream::Pool> pool;
  std::vector<std::optional<upstream::PoolOutcome>> outcomes;

  // priorities[i] is the priority of configuration entry i.
  explicit Harness(std::vector<int> priorities, upstream::PoolOptions opts = {}) {
    std::vector<upstream::EntrySpec> specs;
    for (std::size_t i = 0; i < priorities.size(); ++i) {
      auto t = std::make_unique<test::FakeTransport>();
      fakes.push_back(t.get());
      specs.push_back(upstream::EntrySpec{i, "tls://127.0.0.1:" + std::to_string(8530 + i), priorities[i], std::move(t)});
    }
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), std::move(opts));
  }

  upstream::Pool::Ticket submit() {
    const std::size_t slot = outcomes.size();
    outcomes.emplace_back();
    dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
    return pool->submit(std::move(q), [this, slot](upstream::PoolOutcome&& o) { outcomes[slot] = std::move(o); });
  }
  // As the engine submits: with the deadline of the caller's total budget.
  upstream::Pool::Ticket submit_within(loop::Duration total) {
    const std::size_t slot = outcomes.size();
    outcomes.emplace_back();
    dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
    return pool->submit(std::move(q), sched.now() + total,
                        [this, slot](upstream::PoolOutcome&& o) { outcomes[slot] = std::move(o); });
  }
  upstream::EntrySnapshot snap(std::size_t config_index) {
    for (auto& s : pool->snapshot())
      if (s.index == config_index) return s;
    FAIL("no such entry");
    return {};
  }
  std::size_t delivered() const {
    std::size_t n = 0;
    for (auto& o : outcomes) n += o.has_value();
    return n;
  }
};

}  // namespace

TEST_GROUP(Pool){};

TEST(Pool, ConcurrentExchangesOverlapUpToTheCapAndNeverBeyond) {
  Harness h({0});
  for (std::size_t i = 0; i < max_in_flight_per_entry + 1; ++i) h.submit();
  // All 64 run at once (the predecessor ran one); the 65th waits.
  CHECK_EQUAL(max_in_flight_per_entry, h.fakes[0]->live());
  CHECK_EQUAL(max_in_flight_per_entry, h.fakes[0]->peak());
  auto s = h.snap(0);
  CHECK_EQUAL(max_in_flight_per_entry, s.in_flight);
  CHECK_EQUAL(1u, s.queue_depth);
  CHECK_EQUAL(8u, s.slots);

  h.sched.advance(30ms);
  CHECK_TRUE(h.fakes[0]->answer_oldest());
  // The waiter took the freed capacity: still 64 live, never 65.
  CHECK_EQUAL(max_in_flight_per_entry, h.fakes[0]->live());
  CHECK_EQUAL(max_in_flight_per_entry, h.fakes[0]->peak());
  CHECK_EQUAL(0u, h.snap(0).queue_depth);
  while (h.fakes[0]->answer_oldest()) {
  }
  h.sched.run_ready();
  CHECK_EQUAL(max_in_flight_per_entry + 1, h.delivered());
  for (auto& o : h.outcomes) CHECK_TRUE(o->ok);
}

TEST(Pool, QueueAccountingCountsAWaiterWhenItAcquires) {
  Harness h({0});
  for (std::size_t i = 0; i < max_in_flight_per_entry; ++i) h.submit();
  CHECK_EQUAL(0u, h.snap(0).queued_total);
  h.submit();
  h.sched.advance(250ms);
  CHECK_EQUAL(0u, h.snap(0).queued_total);  // counted when it leaves the queue
  h.fakes[0]->answer_oldest();
  auto s = h.snap(0);
  CHECK_EQUAL(1u, s.queued_total);
  DOUBLES_EQUAL(0.250, s.queued_seconds_total, 1e-9);
}

TEST(Pool, UncontendedCallAddsNoQueueAccounting) {
  Harness h({0});
  h.submit();
  h.sched.advance(10ms);
  h.fakes[0]->answer_oldest();
  h.sched.run_ready();
  auto s = h.snap(0);
  CHECK_EQUAL(0u, s.queued_total);
  DOUBLES_EQUAL(0.0, s.queued_seconds_total, 0.0);
  CHECK_TRUE(h.outcomes[0]->ok);
}

TEST(Pool, CancelledWaiterStillCountsAndLeavesCapacityIntact) {
  upstream::PoolOptions o;
  o.attempt_budget = 10s;  // the in-flight exchanges stall longer than the waiter waits
  Harness h({0}, o);
  for (std::size_t i = 0; i < max_in_flight_per_entry; ++i) h.submit();
  auto waiter = h.submit();
  h.sched.advance(4900ms);
  h.pool->cancel(waiter);  // the caller's total budget ran out in the queue
  auto s = h.snap(0);
  CHECK_EQUAL(1u, s.queued_total);
  DOUBLES_EQUAL(4.9, s.queued_seconds_total, 1e-9);
  CHECK_EQUAL(0u, s.queue_depth);
  h.sched.run_ready();
  CHECK_FALSE(h.outcomes.back().has_value());  // never called back after cancel

  while (h.fakes[0]->answer_oldest()) {
  }
  h.sched.run_ready();
  h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());  // acquired at once: no leaked capacity
  h.fakes[0]->answer_oldest();
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes.back()->ok);
  CHECK_EQUAL(1u, h.snap(0).queued_total);
}

TEST(Pool, WaitersAreServedInArrivalOrder) {
  Harness h({0});
  for (std::size_t i = 0; i < max_in_flight_per_entry; ++i) h.submit();
  h.submit();
  h.submit();
  h.submit();
  std::size_t started_before = h.fakes[0]->started();
  h.fakes[0]->answer_oldest();
  // The first waiter (index 64) got the capacity; completing it answers index 64.
  CHECK_EQUAL(started_before + 1, h.fakes[0]->started());
  CHECK_EQUAL(2u, h.snap(0).queue_depth);
  // Complete everything in start order; delivery order follows.
  while (h.fakes[0]->answer_oldest()) {
  }
  h.sched.run_ready();
  CHECK_EQUAL(max_in_flight_per_entry + 3, h.delivered());
}

TEST(Pool, FailoverWalksEntriesInPriorityOrder) {
  Harness h({10, 0, 5});  // config order != priority order
  h.submit();
  CHECK_EQUAL(1u, h.fakes[1]->live());
  h.fakes[1]->fail_oldest(Cause::connect_failed);
  CHECK_EQUAL(1u, h.fakes[2]->live());
  h.fakes[2]->fail_oldest(Cause::tls_protocol);
  CHECK_EQUAL(1u, h.fakes[0]->live());
  h.fakes[0]->fail_oldest(Cause::eof);
  h.sched.run_ready();
  auto& o = *h.outcomes[0];
  CHECK_FALSE(o.ok);
  CHECK_EQUAL(3u, o.attempts);
  CHECK(o.cause == Cause::eof);
  CHECK_EQUAL(0u, o.entry_index);
}

TEST(Pool, EqualPrioritiesKeepConfigurationOrder) {
  Harness h({0, 0, 0});
  h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());
  CHECK_EQUAL(0u, h.fakes[1]->live());
}

TEST(Pool, EntryInBackoffIsSkippedOnTheFirstPassThenRetried) {
  Harness h({0, 1});
  // Two failures in a row put entry 0 into backoff (failure_threshold = 2).
  for (int i = 0; i < 2; ++i) {
    h.submit();
    h.fakes[0]->fail_oldest(Cause::connect_failed);
    h.fakes[1]->answer_oldest();
  }
  CHECK(h.snap(0).health == upstream::HealthState::backoff);
  h.submit();
  CHECK_EQUAL(0u, h.fakes[0]->live());
  CHECK_EQUAL(1u, h.fakes[1]->live());
  h.fakes[1]->answer_oldest();
  // After the backoff (1 s initial) the preferred entry is tried again.
  h.sched.advance(1001ms);
  h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());
  h.fakes[0]->answer_oldest();
  CHECK(h.snap(0).health == upstream::HealthState::healthy);
}

TEST(Pool, LoneEntryInBackoffIsStillTriedAsLastResort) {
  Harness h({0});
  for (int i = 0; i < 2; ++i) {
    h.submit();
    h.fakes[0]->fail_oldest(Cause::connect_failed);
  }
  CHECK(h.snap(0).health == upstream::HealthState::backoff);
  h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());
  h.fakes[0]->answer_oldest();
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes.back()->ok);
}

TEST(Pool, WaiterSkipsAnEntryThatWentIntoBackoffWhileItQueued) {
  Harness h({0, 1});
  for (std::size_t i = 0; i < max_in_flight_per_entry; ++i) h.submit();
  const std::size_t waiter = h.outcomes.size();
  h.submit();
  CHECK_EQUAL(1u, h.snap(0).queue_depth);
  // Entry 0's in-flight exchanges fail; the first failure releases capacity
  // while the entry is still merely failing (waiter goes to 0), so fill it
  // again with the waiter's view: fail two, which puts 0 into backoff before
  // the waiter is pumped on the second release.
  h.fakes[0]->fail_oldest(Cause::connect_failed);
  // First failure: entry 0 is only "failing", so the waiter acquired it.
  CHECK_EQUAL(0u, h.snap(0).queue_depth);
  // Put a new waiter behind a full entry that is now about to back off.
  const std::size_t second = h.outcomes.size();
  h.submit();
  CHECK_EQUAL(1u, h.snap(0).queue_depth);
  h.fakes[0]->fail_oldest(Cause::connect_failed);  // second failure: backoff
  CHECK(h.snap(0).health == upstream::HealthState::backoff);
  // The second waiter was pumped, saw backoff, and moved to entry 1 instead
  // of using entry 0's freed capacity. Its queue time still counts at 0.
  CHECK_EQUAL(0u, h.snap(0).queue_depth);
  CHECK_EQUAL(2u, h.snap(0).queued_total);
  CHECK_TRUE(h.fakes[1]->live() >= 1);
  (void)waiter;
  (void)second;
}

TEST(Pool, AttemptBudgetMovesToTheNextEntry) {
  upstream::PoolOptions o;
  o.attempt_budget = 700ms;
  Harness h({0, 1}, o);
  h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());
  h.sched.advance(699ms);
  CHECK_EQUAL(0u, h.fakes[1]->live());
  h.sched.advance(1ms);
  CHECK_EQUAL(1u, h.fakes[0]->cancelled());  // the stuck exchange was abandoned
  CHECK_EQUAL(1u, h.fakes[1]->live());
  h.fakes[1]->answer_oldest();
  h.sched.run_ready();
  auto& out = *h.outcomes[0];
  CHECK_TRUE(out.ok);
  CHECK_EQUAL(1u, out.entry_index);
  CHECK_EQUAL(2u, out.attempts);
  auto s0 = h.snap(0);
  CHECK_EQUAL(0u, s0.in_flight);
  CHECK_EQUAL(1u, s0.consecutive_failures);
  CHECK_EQUAL(1u, s0.outcomes[static_cast<std::size_t>(Cause::attempt_timeout)]);
}

TEST(Pool, CancelInFlightAbandonsTheExchangeAndFreesCapacity) {
  Harness h({0});
  auto t = h.submit();
  CHECK_EQUAL(1u, h.snap(0).in_flight);
  h.pool->cancel(t);
  CHECK_EQUAL(1u, h.fakes[0]->cancelled());
  CHECK_EQUAL(0u, h.snap(0).in_flight);
  CHECK_EQUAL(0u, h.snap(0).consecutive_failures);  // giving up is not the upstream's fault
  h.sched.run_ready();
  CHECK_FALSE(h.outcomes[0].has_value());
  CHECK_EQUAL(0u, h.pool->requests());
}

TEST(Pool, CompletionIsNeverDeliveredFromInsideSubmit) {
  Harness h({});
  h.submit();
  CHECK_FALSE(h.outcomes[0].has_value());
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes[0].has_value());
  CHECK_FALSE(h.outcomes[0]->ok);
}

TEST(Pool, CancelAfterCompletionButBeforeDeliverySuppressesTheCallback) {
  Harness h({0});
  auto t = h.submit();
  h.fakes[0]->answer_oldest();
  h.pool->cancel(t);
  h.sched.run_ready();
  CHECK_FALSE(h.outcomes[0].has_value());
}

TEST(Pool, AttemptReportsReachTheObserver) {
  std::vector<Cause> seen;
  upstream::PoolOptions o;
  o.on_attempt = [&seen](const upstream::AttemptReport& r) { seen.push_back(r.cause); };
  Harness h({0, 1}, o);
  h.submit();
  h.fakes[0]->fail_oldest(Cause::tls_protocol);
  h.fakes[1]->answer_oldest();
  CHECK_EQUAL(2u, seen.size());
  CHECK(seen[0] == Cause::tls_protocol);
  CHECK(seen[1] == Cause::ok);
}

TEST(Pool, SnapshotCarriesTransportStats) {
  Harness h({0});
  h.fakes[0]->open_sessions = 3;
  h.fakes[0]->reuse_recoveries = 7;
  auto s = h.snap(0);
  CHECK_EQUAL(3u, s.transport.open_sessions);
  CHECK_EQUAL(7u, s.transport.reuse_recoveries);
  STRCMP_EQUAL("dot", s.kind.c_str());
}

TEST(Pool, DestroyingThePoolAbandonsInFlightExchanges) {
  Harness h({0});
  h.submit();
  h.submit();
  auto* fake = h.fakes[0];
  (void)fake;
  h.pool.reset();  // must not crash nor call back; fakes die with the pool
  h.sched.run_ready();
  CHECK_EQUAL(0u, h.delivered());
}

// ---- error answers (issue 13, item 3) ------------------------------------------

namespace {

// An answer to the query with header RCODE `rcode` and QR set.
auto with_rcode(std::uint8_t rcode) {
  return [rcode](const dns::Bytes& q) {
    dns::Bytes r = q;
    r[2] |= 0x80;
    r[3] = static_cast<std::uint8_t>((r[3] & 0xF0) | rcode);
    return r;
  };
}
std::uint8_t rcode_of(const dns::Bytes& r) { return r.size() > 3 ? r[3] & 0x0F : 0xFF; }

constexpr std::uint8_t formerr = 1, servfail = 2, nxdomain = 3, notimp = 4, refused = 5;

}  // namespace

TEST(Pool, EveryErrorRcodeFailsOverToTheNextEntry) {
  struct Row {
    std::uint8_t rcode;
    std::uint32_t health_failures;  // what the answer costs the entry's health
  };
  // SERVFAIL is neutral for health (a name's broken DNSSEC is not the
  // upstream's fault); the others say the upstream will not serve us.
  for (const Row& row : {Row{servfail, 0}, Row{refused, 1}, Row{notimp, 1}, Row{formerr, 1}, Row{12, 1}}) {
    Harness h({0, 1});
    h.submit();
    CHECK_TRUE(h.fakes[0]->respond_oldest(with_rcode(row.rcode)));
    CHECK_EQUAL(1u, h.fakes[1]->live());  // the query moved on at once
    h.fakes[1]->answer_oldest();
    h.sched.run_ready();
    const auto& out = *h.outcomes[0];
    CHECK_TRUE(out.ok);
    CHECK_FALSE(out.error_answer);
    CHECK_EQUAL(1u, out.entry_index);
    CHECK_EQUAL(2u, out.attempts);
    CHECK_EQUAL(0, rcode_of(out.response));
    const auto s0 = h.snap(0);
    CHECK_EQUAL(1u, s0.error_answers[row.rcode]);
    CHECK_EQUAL(1u, s0.outcomes[static_cast<std::size_t>(Cause::error_answer)]);
    CHECK_EQUAL(0u, s0.outcomes[static_cast<std::size_t>(Cause::ok)]);
    CHECK_EQUAL(row.health_failures, s0.consecutive_failures);
  }
}

TEST(Pool, NxdomainIsAnAnswerNotAFailover) {
  Harness h({0, 1});
  h.submit();
  h.fakes[0]->respond_oldest(with_rcode(nxdomain));
  h.sched.run_ready();
  CHECK_EQUAL(0u, h.fakes[1]->started());
  CHECK_TRUE(h.outcomes[0]->ok);
  CHECK_EQUAL(nxdomain, rcode_of(h.outcomes[0]->response));
  CHECK(h.snap(0).health == upstream::HealthState::healthy);
}

TEST(Pool, WhenEveryEntryAnswersWithAnErrorTheBestAnswerIsRelayed) {
  struct Row {
    std::uint8_t first, second;   // rcodes from the primary, then the secondary
    std::uint8_t want;            // rcode relayed
    std::size_t want_entry;
  };
  for (const Row& row : {Row{refused, servfail, servfail, 1},  // a statement about the name wins
                         Row{servfail, refused, servfail, 0},
                         Row{notimp, refused, refused, 1}, Row{refused, notimp, refused, 0},
                         Row{formerr, notimp, notimp, 1}, Row{refused, refused, refused, 0},  // tie: priority
                         Row{12, formerr, formerr, 1}}) {
    Harness h({0, 1});
    h.submit();
    h.fakes[0]->respond_oldest(with_rcode(row.first));
    h.fakes[1]->respond_oldest(with_rcode(row.second));
    h.sched.run_ready();
    const auto& out = *h.outcomes[0];
    CHECK_TRUE(out.ok);  // an upstream's answer, relayed, not a made-up SERVFAIL
    CHECK_TRUE(out.error_answer);
    CHECK_EQUAL(row.want, rcode_of(out.response));
    CHECK_EQUAL(row.want_entry, out.entry_index);
    CHECK_EQUAL(2u, out.attempts);
  }
}

TEST(Pool, AnErrorAnswerBeatsAFailureElsewhere) {
  Harness h({0, 1});
  h.submit();
  h.fakes[0]->respond_oldest(with_rcode(refused));
  h.fakes[1]->fail_oldest(Cause::connect_failed);
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes[0]->ok);
  CHECK_TRUE(h.outcomes[0]->error_answer);
  CHECK_EQUAL(refused, rcode_of(h.outcomes[0]->response));
  CHECK_EQUAL(0u, h.outcomes[0]->entry_index);
}

TEST(Pool, AnUpstreamThatRefusesEverythingBacksOffOneThatServfailsDoesNot) {
  Harness h({0, 1});
  for (int i = 0; i < 2; ++i) {
    h.submit();
    h.fakes[0]->respond_oldest(with_rcode(refused));
    h.fakes[1]->answer_oldest();
  }
  CHECK(h.snap(0).health == upstream::HealthState::backoff);
  h.submit();
  CHECK_EQUAL(0u, h.fakes[0]->live());  // the household now asks the secondary first
  CHECK_EQUAL(1u, h.fakes[1]->live());

  Harness g({0, 1});
  for (int i = 0; i < 5; ++i) {
    g.submit();
    g.fakes[0]->respond_oldest(with_rcode(servfail));
    g.fakes[1]->answer_oldest();
  }
  CHECK(g.snap(0).health == upstream::HealthState::healthy);
  CHECK_EQUAL(5u, g.snap(0).error_answers[servfail]);
}

TEST(Pool, ServfailIsNotReportedAsAnAttemptFailureRefusedIs) {
  std::vector<Cause> seen;
  upstream::PoolOptions o;
  o.on_attempt = [&seen](const upstream::AttemptReport& r) { seen.push_back(r.cause); };
  Harness h({0, 1, 2}, o);
  h.submit();
  h.fakes[0]->respond_oldest(with_rcode(servfail));
  h.fakes[1]->respond_oldest(with_rcode(refused));
  h.fakes[2]->answer_oldest();
  CHECK_EQUAL(2u, seen.size());
  CHECK(seen[0] == Cause::error_answer);
  CHECK(seen[1] == Cause::ok);
}

// ---- the one extra attempt after an attempt timeout ------------------------------

TEST(Pool, AttemptTimeoutOnTheLastEntryGetsOneMoreAttemptWithinTheDeadline) {
  upstream::PoolOptions o;
  o.attempt_budget = 2s;
  Harness h({0}, o);
  h.submit_within(5s);
  h.sched.advance(2s);
  h.sched.run_ready();
  CHECK_FALSE(h.outcomes[0].has_value());  // today: SERVFAIL here, with 3 s unused
  CHECK_EQUAL(1u, h.fakes[0]->cancelled());  // the stuck exchange (and its session) given up
  CHECK_EQUAL(1u, h.fakes[0]->live());       // the second attempt
  CHECK_EQUAL(2u, h.fakes[0]->started());
  h.sched.advance(500ms);
  h.fakes[0]->answer_oldest();
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes[0]->ok);
  CHECK_EQUAL(2u, h.outcomes[0]->attempts);
  CHECK(h.snap(0).health == upstream::HealthState::healthy);
}

TEST(Pool, TheExtraAttemptIsBoundedByTheDeadlineAndHappensOnce) {
  upstream::PoolOptions o;
  o.attempt_budget = 2s;
  Harness h({0}, o);
  h.submit_within(3s);
  h.sched.advance(2s);
  CHECK_EQUAL(2u, h.fakes[0]->started());
  h.sched.advance(999ms);
  CHECK_FALSE(h.outcomes[0].has_value());
  h.sched.advance(1ms);  // the deadline: min(attempt budget, time left) = 1 s
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes[0].has_value());
  CHECK_FALSE(h.outcomes[0]->ok);
  CHECK(h.outcomes[0]->cause == Cause::attempt_timeout);
  CHECK_EQUAL(2u, h.outcomes[0]->attempts);
  CHECK_EQUAL(2u, h.fakes[0]->cancelled());
  CHECK_EQUAL(0u, h.fakes[0]->live());
  // Only the full-budget timeout counts against health: the cut one was the
  // caller's budget running out.
  CHECK_EQUAL(1u, h.snap(0).consecutive_failures);

  // With time to spare, still only one extra attempt.
  Harness g({0}, o);
  g.submit_within(10s);
  g.sched.advance(4s);
  g.sched.run_ready();
  CHECK_TRUE(g.outcomes[0].has_value());
  CHECK_FALSE(g.outcomes[0]->ok);
  CHECK_EQUAL(2u, g.fakes[0]->started());
}

TEST(Pool, NoExtraAttemptAfterAFailureThatIsNotATimeout) {
  Harness h({0});
  h.submit_within(5s);
  h.fakes[0]->fail_oldest(Cause::tls_protocol);
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes[0].has_value());
  CHECK_EQUAL(1u, h.fakes[0]->started());
}

TEST(Pool, NoAttemptOutlivesTheDeadline) {
  upstream::PoolOptions o;
  o.attempt_budget = 2s;
  Harness h({0, 1}, o);
  h.submit_within(1500ms);
  h.sched.advance(1500ms);
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes[0].has_value());
  CHECK_FALSE(h.outcomes[0]->ok);
  CHECK_EQUAL(0u, h.fakes[1]->started());  // nothing starts past the deadline
  CHECK_EQUAL(0u, h.snap(0).consecutive_failures);
}

// ---- backoff probes, not floods (issue 13, item 5) -------------------------------

namespace {

// 30 queries fail together at entry 0 and are answered by entry 1.
void fail_a_burst_of_30(Harness& h) {
  for (int i = 0; i < 30; ++i) h.submit();
  CHECK_EQUAL(30u, h.fakes[0]->live());
  for (int i = 0; i < 30; ++i) h.fakes[0]->fail_oldest(Cause::connection_reset);
  while (h.fakes[1]->answer_oldest()) {
  }
  h.sched.run_ready();
}

}  // namespace

TEST(Pool, ABurstOfConcurrentFailuresIsOneBackoffStep) {
  Harness h({0, 1});
  fail_a_burst_of_30(h);
  const auto s = h.snap(0);
  CHECK(s.health == upstream::HealthState::backoff);
  CHECK_EQUAL(1u, s.backoffs_total);  // not 29
  CHECK(s.backoff_remaining == 1s);   // the initial wait, not the 16 s cap
  CHECK_EQUAL(30u, s.consecutive_failures);
}

TEST(Pool, WhenBackoffEndsExactlyOneExchangeProbesWhileTheRestFailOver) {
  Harness h({0, 1});
  fail_a_burst_of_30(h);
  h.sched.advance(1s);
  CHECK(h.snap(0).health == upstream::HealthState::probing);
  for (int i = 0; i < 10; ++i) h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());  // the probe
  CHECK_EQUAL(9u, h.fakes[1]->live());  // everyone else keeps using the secondary
  CHECK(h.snap(0).health == upstream::HealthState::probing);
  // The probe succeeds: recovered, and the next query goes to the primary.
  h.fakes[0]->answer_oldest();
  CHECK(h.snap(0).health == upstream::HealthState::healthy);
  h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());
}

TEST(Pool, AFailedProbeDoublesTheWait) {
  Harness h({0, 1});
  fail_a_burst_of_30(h);
  h.sched.advance(1s);
  h.submit();
  h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());
  h.fakes[0]->fail_oldest(Cause::connection_reset);
  auto s = h.snap(0);
  CHECK(s.health == upstream::HealthState::backoff);
  CHECK(s.backoff_remaining == 2s);
  CHECK_EQUAL(2u, s.backoffs_total);
  h.sched.advance(2s);
  h.submit();
  h.fakes[0]->fail_oldest(Cause::connection_reset);
  CHECK(h.snap(0).backoff_remaining == 4s);
}

TEST(Pool, LastResortFailuresDuringBackoffDoNotEscalate) {
  // A lone entry: every query uses it as a last resort while it backs off;
  // those failing (started before the wait ended) add no step.
  Harness h({0});
  for (int i = 0; i < 2; ++i) {
    h.submit();
    h.fakes[0]->fail_oldest(Cause::connect_failed);
  }
  CHECK_EQUAL(1u, h.snap(0).backoffs_total);
  for (int i = 0; i < 5; ++i) h.submit();  // last resorts during the backoff
  h.sched.advance(1s);
  for (int i = 0; i < 5; ++i) h.fakes[0]->fail_oldest(Cause::connect_failed);
  CHECK_EQUAL(1u, h.snap(0).backoffs_total);
  CHECK(h.snap(0).health == upstream::HealthState::probing);
}

TEST(Pool, ACancelledProbeLetsTheNextExchangeProbe) {
  Harness h({0, 1});
  fail_a_burst_of_30(h);
  h.sched.advance(1s);
  auto probe = h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());
  h.pool->cancel(probe);  // the client gave up: no verdict
  h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());  // a new probe, not zero, not a flood
  CHECK_EQUAL(2u, h.fakes[0]->started() - 30);
}

// A certificate check judged by a clock that then stepped is no evidence
// about the upstream: the step clears its failures and backoff (issue 16).
TEST(Pool, ClockStepForgetsCertificateFailuresOnly) {
  Harness h({0, 1});
  for (int i = 0; i < 2; ++i) {
    h.submit();
    CHECK_TRUE(h.fakes[0]->fail_oldest(Cause::certificate_clock_behind));
    h.sched.run_ready();
    CHECK_TRUE(h.fakes[1]->fail_oldest(Cause::connect_failed));
    h.sched.run_ready();
  }
  CHECK(h.snap(0).health == upstream::HealthState::backoff);
  CHECK(h.snap(0).last_failure == Cause::certificate_clock_behind);
  CHECK(h.snap(1).health == upstream::HealthState::backoff);

  const auto reset = h.pool->clock_stepped();
  CHECK_EQUAL(1u, reset.size());
  CHECK_EQUAL(0u, reset[0]);
  CHECK(h.snap(0).health == upstream::HealthState::healthy);
  CHECK(h.snap(0).last_failure == Cause::ok);
  CHECK_EQUAL(0u, h.snap(0).consecutive_failures);
  // A connect failure does not depend on the clock: still in backoff.
  CHECK(h.snap(1).health == upstream::HealthState::backoff);

  // The next query goes to entry 0 on the first pass again.
  h.submit();
  CHECK_EQUAL(1u, h.fakes[0]->live());
  CHECK_EQUAL(0u, h.fakes[1]->live());
}
