// The cache's pure decisions: freshness, serve-stale (RFC 8767) and its
// failure recheck window, prefetch.
#include "cache/policy.hpp"

#include <initializer_list>
#include <vector>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace std::chrono_literals;

namespace {
std::vector<upstream::EntryLoad> loads(std::initializer_list<upstream::EntryLoad> l) { return l; }
}  // namespace

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
                                RefreshState::error_answer, RefreshState::answered,
                                RefreshState::upstreams_failing, RefreshState::failed_recently};
  for (bool on : {false, true}) {
    for (Freshness f : all_f) {
      for (RefreshState r : all_r) {
        const bool want = on && f == Freshness::stale &&
                          (r == RefreshState::timer_elapsed || r == RefreshState::every_attempt_failed ||
                           r == RefreshState::error_answer || r == RefreshState::upstreams_failing ||
                           r == RefreshState::failed_recently);
        CHECK_EQUAL(want, may_serve_stale(on, f, r));
      }
    }
  }
}

TEST(CachePolicy, RefreshStateOnArrivalTable) {
  // RFC 8767 §4: refreshes from a failing upstream no more often than every
  // 30 s. Inside the window opened by the last failed refresh the stale
  // answer goes at once, whatever the upstreams' health; after it, the
  // usual rule (at once only while every upstream is failing).
  const loop::TimePoint failed{5000s};
  const std::optional<loop::TimePoint> never;
  struct Row {
    std::optional<loop::TimePoint> failed_at;
    loop::TimePoint now;
    loop::Duration recheck;
    bool healthy;
    RefreshState want;
  } rows[] = {
      {never, failed, 30s, true, RefreshState::waiting},
      {never, failed, 30s, false, RefreshState::upstreams_failing},
      {failed, failed, 30s, true, RefreshState::failed_recently},
      {failed, failed, 30s, false, RefreshState::failed_recently},
      {failed, failed + 29999ms, 30s, true, RefreshState::failed_recently},
      {failed, failed + 30s, 30s, true, RefreshState::waiting},  // the window is over: one refresh again
      {failed, failed + 30s, 30s, false, RefreshState::upstreams_failing},
      {failed, failed + 3600s, 30s, true, RefreshState::waiting},
      {failed, failed + 10s, 5s, true, RefreshState::waiting},  // a shorter window
      {failed, failed, 0s, true, RefreshState::waiting},          // no window at all
  };
  for (const auto& r : rows) {
    const RefreshState got = refresh_state_on_arrival(r.failed_at, r.now, r.recheck, r.healthy);
    LONGS_EQUAL(static_cast<int>(r.want), static_cast<int>(got));
  }
}

TEST(CachePolicy, PrefetchLeavesTheLastFreeCapacity) {
  upstream::EntryLoad e;
  e.health = upstream::HealthState::healthy;
  e.in_flight = 0;
  CHECK_TRUE(may_prefetch(loads({e})));
  e.in_flight = upstream::max_in_flight_per_entry - 2;
  CHECK_TRUE(may_prefetch(loads({e})));
  e.in_flight = upstream::max_in_flight_per_entry - 1;  // the last free exchange is a client's
  CHECK_FALSE(may_prefetch(loads({e})));
  e.in_flight = 0;
  e.queue_depth = 1;  // anyone waiting: no
  CHECK_FALSE(may_prefetch(loads({e})));
  upstream::EntryLoad backoff;
  backoff.health = upstream::HealthState::backoff;
  CHECK_FALSE(may_prefetch(loads({backoff})));
  CHECK_TRUE(may_prefetch(loads({backoff, upstream::EntryLoad{}})));
  CHECK_FALSE(may_prefetch(loads({})));
}

TEST(CachePolicy, RefreshesBehindStaleAnswersLeaveTheClientsCapacity) {
  upstream::EntryLoad e;
  e.health = upstream::HealthState::backoff;  // any health: the refresh is the probe for its return
  CHECK_TRUE(may_refresh_behind_stale(loads({e})));
  e.in_flight = upstream::max_in_flight_per_entry / 4 - 1;
  CHECK_TRUE(may_refresh_behind_stale(loads({e})));
  e.in_flight = upstream::max_in_flight_per_entry / 4;  // a quarter of the cap taken: enough probes
  CHECK_FALSE(may_refresh_behind_stale(loads({e})));
  e.in_flight = 0;
  e.queue_depth = 1;  // a client waits: no
  CHECK_FALSE(may_refresh_behind_stale(loads({e})));
  CHECK_TRUE(may_refresh_behind_stale(loads({e, upstream::EntryLoad{}})));
  CHECK_FALSE(may_refresh_behind_stale(loads({})));
}
