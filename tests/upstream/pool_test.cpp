// The pool: capacity, the FIFO of waiters, failover order, backoff skips,
// cancellation and delivery (error answers, the extra attempt and backoff
// probes are in pool_error_answers_test, pool_attempt_timeout_test and
// pool_backoff_test).
#include "upstream/pool_harness.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using test::Harness;
using upstream::Cause;
using upstream::max_in_flight_per_entry;

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

TEST(Pool, RequestsSettledInOnePassShareOneDeliveryTimerAndKeepTheirOrder) {
  // One zero-delay timer for the pass, not one per request: under a
  // 500-query burst those were an event_add and event_del per answer.
  Harness h({0});
  std::vector<int> order;
  for (int i = 0; i < 10; ++i) {
    dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
    h.pool->submit(std::move(q), [&order, i](upstream::PoolOutcome&& o) {
      CHECK_TRUE(o.ok);
      order.push_back(i);
    });
  }
  const std::size_t armed = h.sched.pending();  // the ten attempt budgets
  CHECK_TRUE(armed >= 10);
  while (h.fakes[0]->answer_oldest()) {
  }
  CHECK_TRUE(order.empty());  // delivered from the loop, never inside the answer
  LONGS_EQUAL(armed - 10 + 1, h.sched.pending());
  h.sched.run_ready();
  LONGS_EQUAL(10, order.size());
  for (int i = 0; i < 10; ++i) LONGS_EQUAL(i, order[static_cast<std::size_t>(i)]);
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
