// The cache's pure decisions: freshness, serve-stale (RFC 8767), prefetch.
#include "cache/policy.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace std::chrono_literals;

TEST_GROUP(CachePolicy){};

TEST(CachePolicy, FreshnessTable) {
  const loop::TimePoint t0{1000s};
  const EntryAge e{t0, 100};
  const FreshnessRules stale_on{10, 3600s};
  const FreshnessRules stale_off{10, 0s};
  struct Row {
    loop::Duration at;
    FreshnessRules rules;
    Freshness want;
  } rows[] = {
      {0s, stale_on, Freshness::fresh},
      {89s, stale_on, Freshness::fresh},
      {90s, stale_on, Freshness::fresh_prefetch},  // last 10 % of 100 s
      {99999ms, stale_on, Freshness::fresh_prefetch},
      {100s, stale_on, Freshness::stale},
      {3699s, stale_on, Freshness::stale},
      {3700s, stale_on, Freshness::expired},
      {100s, stale_off, Freshness::expired},
      {95s, FreshnessRules{0, 0s}, Freshness::fresh},  // prefetch off
  };
  for (const auto& r : rows) {
    STRCMP_EQUAL(describe(r.want), describe(freshness_at(e, t0 + r.at, r.rules)));
  }
  UNSIGNED_LONGS_EQUAL(0, age_seconds(e, t0 - 5s));
  UNSIGNED_LONGS_EQUAL(42, age_seconds(e, t0 + 42900ms));
}

TEST(CachePolicy, MayServeStaleTable) {
  const Freshness all_f[] = {Freshness::fresh, Freshness::fresh_prefetch, Freshness::stale, Freshness::expired};
  const RefreshState all_r[] = {RefreshState::waiting, RefreshState::timer_elapsed, RefreshState::every_attempt_failed,
                                RefreshState::error_answer, RefreshState::answered};
  for (bool on : {false, true}) {
    for (Freshness f : all_f) {
      for (RefreshState r : all_r) {
        const bool want = on && f == Freshness::stale &&
                          (r == RefreshState::timer_elapsed || r == RefreshState::every_attempt_failed ||
                           r == RefreshState::error_answer);
        CHECK_EQUAL(want, may_serve_stale(on, f, r));
      }
    }
  }
}

TEST(CachePolicy, PrefetchLeavesTheLastFreeCapacity) {
  upstream::EntrySnapshot e;
  e.health = upstream::HealthState::healthy;
  e.in_flight = 0;
  CHECK_TRUE(may_prefetch({e}));
  e.in_flight = upstream::max_in_flight_per_entry - 2;
  CHECK_TRUE(may_prefetch({e}));
  e.in_flight = upstream::max_in_flight_per_entry - 1;  // the last free exchange is a client's
  CHECK_FALSE(may_prefetch({e}));
  e.in_flight = 0;
  e.queue_depth = 1;  // anyone waiting: no
  CHECK_FALSE(may_prefetch({e}));
  upstream::EntrySnapshot backoff;
  backoff.health = upstream::HealthState::backoff;
  CHECK_FALSE(may_prefetch({backoff}));
  CHECK_TRUE(may_prefetch({backoff, upstream::EntrySnapshot{}}));
  CHECK_FALSE(may_prefetch({}));
}
