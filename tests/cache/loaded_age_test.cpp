// How old a loaded answer is: the clock verdict and the ageing as tables.
#include "cache/loaded_age.hpp"

#include <string>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace std::chrono_literals;

TEST_GROUP(LoadedAge){};

TEST(LoadedAge, ClockVerdict) {
  struct Row {
    std::int64_t written, now;
    ClockVerdict verdict;
    std::uint64_t elapsed;
  };
  const Row rows[] = {
      {1000, 1000, ClockVerdict::trusted, 0},        // restarted within the second
      {1000, 4600, ClockVerdict::trusted, 3600},     // an hour off
      {1000, 999, ClockVerdict::behind_file, 0},     // no RTC, no NTP yet: behind the file
      {1796000000, 1700000000, ClockVerdict::behind_file, 0},  // the image's build-time floor
      {INT64_MIN, INT64_MAX, ClockVerdict::trusted, std::uint64_t{1} << 34},  // capped, never overflows
  };
  for (const Row& r : rows) {
    const FileClock c = judge_clock(r.written, r.now);
    if (c.verdict != r.verdict || c.elapsed_seconds != r.elapsed)
      FAIL(("written " + std::to_string(r.written) + ", now " + std::to_string(r.now) + ": " + describe(c.verdict) +
            " " + std::to_string(c.elapsed_seconds))
               .c_str());
  }
}

TEST(LoadedAge, Table) {
  const loop::TimePoint now{5000s};
  const FreshnessRules rules{10, 86400s};
  struct Row {
    const char* what;
    std::uint32_t ttl, age_when_written;
    FileClock clock;
    loop::Duration window;
    std::optional<Freshness> want;  // nullopt: not loaded
    std::uint32_t want_age = 0;      // whole seconds, when loaded
  };
  const FileClock trusted100{ClockVerdict::trusted, 100};
  const FileClock behind{ClockVerdict::behind_file, 0};
  const Row rows[] = {
      {"aged by the gap: 300 s TTL, 20 s old, 100 s off", 300, 20, trusted100, 86400s, Freshness::fresh, 120},
      {"past its TTL by the gap: stale", 300, 250, trusted100, 86400s, Freshness::stale, 350},
      {"past TTL and window: not loaded", 300, 0, {ClockVerdict::trusted, 300 + 86400}, 86400s, std::nullopt},
      {"just inside the window", 300, 0, {ClockVerdict::trusted, 300 + 86399}, 86400s, Freshness::stale, 300 + 86399},
      {"serve-stale off: only fresh entries load", 300, 250, trusted100, 0s, std::nullopt},
      {"serve-stale off, still fresh", 300, 20, trusted100, 0s, Freshness::fresh, 120},
      {"clock behind: a fresh entry loads as stale", 300, 20, behind, 86400s, Freshness::stale, 300},
      {"clock behind: a 1-day TTL is not fresh either", 86400, 0, behind, 86400s, Freshness::stale, 86400},
      {"clock behind: never younger than when written", 300, 400, behind, 86400s, Freshness::stale, 400},
      {"clock behind, serve-stale off: nothing loads", 300, 20, behind, 0s, std::nullopt},
      {"clock behind, window already spent at the save", 300, 300 + 86400, behind, 86400s, std::nullopt},
  };
  for (const Row& r : rows) {
    const auto got = loaded_age(r.ttl, r.age_when_written, r.clock, now, r.window);
    if (got.has_value() != r.want.has_value()) FAIL((std::string(r.what) + ": loaded or not").c_str());
    if (!got) continue;
    FreshnessRules fr = rules;
    fr.stale_window = r.window;
    const Freshness f = freshness_at(*got, now, fr);
    const Freshness want = *r.want;
    // fresh_prefetch is fresh for this purpose.
    const Freshness norm = f == Freshness::fresh_prefetch ? Freshness::fresh : f;
    if (norm != want) FAIL((std::string(r.what) + ": " + describe(f)).c_str());
    if (age_seconds(*got, now) != r.want_age)
      FAIL((std::string(r.what) + ": age " + std::to_string(age_seconds(*got, now))).c_str());
    CHECK_EQUAL(r.ttl, got->ttl_seconds);
  }
}
