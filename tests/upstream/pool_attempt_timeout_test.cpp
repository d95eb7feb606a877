// The pool's one extra attempt after an attempt timeout, bounded by the deadline.
#include "upstream/pool_harness.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using test::Harness;
using upstream::Cause;
using upstream::max_in_flight_per_entry;

TEST_GROUP(PoolAttemptTimeout){};

TEST(PoolAttemptTimeout, AttemptTimeoutOnTheLastEntryGetsOneMoreAttemptWithinTheDeadline) {
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

TEST(PoolAttemptTimeout, TheExtraAttemptIsBoundedByTheDeadlineAndHappensOnce) {
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

TEST(PoolAttemptTimeout, NoExtraAttemptAfterAFailureThatIsNotATimeout) {
  Harness h({0});
  h.submit_within(5s);
  h.fakes[0]->fail_oldest(Cause::tls_protocol);
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes[0].has_value());
  CHECK_EQUAL(1u, h.fakes[0]->started());
}

TEST(PoolAttemptTimeout, NoAttemptOutlivesTheDeadline) {
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
