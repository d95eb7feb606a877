#include "support/fake_scheduler.hpp"
#include "upstream/health.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using upstream::HealthState;

TEST_GROUP(Health){};

TEST(Health, OneFailureIsFailingNotBackoff) {
  test::FakeScheduler s;
  upstream::Health h;
  h.record_failure(s.now());
  CHECK(h.state(s.now()) == HealthState::failing);
}

TEST(Health, EachFailedProbeDoublesTheWaitUpToTheCap) {
  test::FakeScheduler s;
  upstream::HealthPolicy p;
  p.failure_threshold = 2;
  p.initial_backoff = 1s;
  p.max_backoff = 4s;
  upstream::Health h(p);
  h.record_failure(s.now());
  h.record_failure(s.now());
  CHECK(h.state(s.now()) == HealthState::backoff);
  CHECK_FALSE(h.admits(s.now()));
  CHECK(h.backoff_until() - s.now() == 1s);
  for (auto want : {2s, 4s, 4s}) {  // the last one capped
    s.advance(h.backoff_until() - s.now());
    CHECK(h.state(s.now()) == HealthState::probing);  // backoff over: one probe allowed
    CHECK_TRUE(h.admits(s.now()));
    const auto probe = h.exchange_started(s.now());
    CHECK_TRUE(probe != 0);
    h.record_failure(s.now(), probe);
    CHECK(h.backoff_until() - s.now() == want);
  }
  CHECK_EQUAL(4u, h.backoffs_total());
}

TEST(Health, FailuresThatAreNotTheProbeNeverEscalate) {
  test::FakeScheduler s;
  upstream::Health h;
  // A burst of 30 exchanges failing together: one step.
  for (int i = 0; i < 30; ++i) h.record_failure(s.now());
  CHECK_EQUAL(1u, h.backoffs_total());
  CHECK(h.backoff_until() - s.now() == 1s);
  // Exchanges started during the backoff (last resorts) fail after it ended.
  const auto during = h.exchange_started(s.now());
  CHECK_EQUAL(0u, during);
  s.advance(1s);
  h.record_failure(s.now(), during);
  h.record_failure(s.now());
  CHECK_EQUAL(1u, h.backoffs_total());
  CHECK(h.state(s.now()) == HealthState::probing);
}

TEST(Health, ExactlyOneProbeAtATime) {
  test::FakeScheduler s;
  upstream::Health h;
  h.record_failure(s.now());
  h.record_failure(s.now());
  s.advance(1s);
  const auto probe = h.exchange_started(s.now());
  CHECK_TRUE(probe != 0);
  CHECK_FALSE(h.admits(s.now()));  // the rest fail over
  CHECK_EQUAL(0u, h.exchange_started(s.now()));  // a last resort is not a second probe
  CHECK(h.state(s.now()) == HealthState::probing);
  // A probe without a verdict (cancelled) frees the probe.
  h.exchange_abandoned(probe);
  CHECK_TRUE(h.admits(s.now()));
  h.exchange_abandoned(probe);  // stale: harmless
  const auto second = h.exchange_started(s.now());
  CHECK_TRUE(second != 0 && second != probe);
  h.record_failure(s.now(), probe);  // a stale token does not escalate
  CHECK_EQUAL(1u, h.backoffs_total());
  h.record_success();
  CHECK(h.state(s.now()) == HealthState::healthy);
  CHECK_TRUE(h.admits(s.now()));
}

TEST(Health, StatesHaveStableNames) {
  STRCMP_EQUAL("healthy", upstream::describe(HealthState::healthy));
  STRCMP_EQUAL("failing", upstream::describe(HealthState::failing));
  STRCMP_EQUAL("backoff", upstream::describe(HealthState::backoff));
  STRCMP_EQUAL("probing", upstream::describe(HealthState::probing));
}

TEST(Health, SuccessRecoversCompletely) {
  test::FakeScheduler s;
  upstream::Health h;
  h.record_failure(s.now());
  h.record_failure(s.now());
  h.record_failure(s.now());
  h.record_success();
  CHECK(h.state(s.now()) == HealthState::healthy);
  CHECK_EQUAL(0u, h.consecutive_failures());
  h.record_failure(s.now());
  h.record_failure(s.now());
  CHECK(h.backoff_until() - s.now() == 1s);  // the doubling restarted
}
