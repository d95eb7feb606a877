// The pool's backoff: probes, not floods (rules in upstream/health.hpp).
#include "upstream/pool_harness.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using test::Harness;
using upstream::Cause;
using upstream::max_in_flight_per_entry;

TEST_GROUP(PoolBackoff){};

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

TEST(PoolBackoff, ABurstOfConcurrentFailuresIsOneBackoffStep) {
  Harness h({0, 1});
  fail_a_burst_of_30(h);
  const auto s = h.snap(0);
  CHECK(s.health == upstream::HealthState::backoff);
  CHECK_EQUAL(1u, s.backoffs_total);  // not 29
  CHECK(s.backoff_remaining == 1s);   // the initial wait, not the 16 s cap
  CHECK_EQUAL(30u, s.consecutive_failures);
}

TEST(PoolBackoff, WhenBackoffEndsExactlyOneExchangeProbesWhileTheRestFailOver) {
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

TEST(PoolBackoff, AFailedProbeDoublesTheWait) {
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

TEST(PoolBackoff, LastResortFailuresDuringBackoffDoNotEscalate) {
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

TEST(PoolBackoff, ACancelledProbeLetsTheNextExchangeProbe) {
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
// about the upstream: the step clears its failures and backoff.
TEST(PoolBackoff, ClockStepForgetsCertificateFailuresOnly) {
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
