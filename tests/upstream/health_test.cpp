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

TEST(Health, BackoffDoublesUpToTheCap) {
  test::FakeScheduler s;
  upstream::HealthPolicy p;
  p.failure_threshold = 2;
  p.initial_backoff = 1s;
  p.max_backoff = 4s;
  upstream::Health h(p);
  h.record_failure(s.now());
  h.record_failure(s.now());
  CHECK(h.state(s.now()) == HealthState::backoff);
  CHECK(h.backoff_until() - s.now() == 1s);
  s.advance(1s);
  CHECK(h.state(s.now()) == HealthState::failing);  // backoff over: probe allowed
  h.record_failure(s.now());
  CHECK(h.backoff_until() - s.now() == 2s);
  s.advance(2s);
  h.record_failure(s.now());
  CHECK(h.backoff_until() - s.now() == 4s);
  s.advance(4s);
  h.record_failure(s.now());
  CHECK(h.backoff_until() - s.now() == 4s);  // capped
  CHECK_EQUAL(4u, h.backoffs_total());
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
